"""``evidence-runner certify-batch``: many candidates judged against one baseline.

A harness samples many patches per issue; each is judged by the same ``certify`` a single
candidate gets, in a process of its own (a crash or a timeout costs only that candidate), after B's
suite run was built once and receipted in the shared store, so every candidate reuses it. The
pieces: ``candidates`` (what to judge), ``baseline`` (B, built first), ``command`` (the certify
each candidate gets), ``local`` (candidates in parallel processes) or ``ray_exec`` (candidates as
Ray tasks, each in a clone of the repository ``ship`` sends), ``rank`` (the summary);
``runner.batch_cmd`` ties them together and resumes an interrupted batch.
"""
