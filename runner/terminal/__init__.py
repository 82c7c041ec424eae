"""What a person at a terminal or reading a CI log sees while the runner works and when it ends.

``activity`` is what the runner is doing now (the rung, the test process and how far it got),
written by the climb and read by ``live``'s display; ``summary`` is the closing report of a record.
Neither decides anything: a verdict never depends on what was shown.
"""
