"""The harness-side runner: ``evidence-runner``. Imports the shared model, never the plugin."""
