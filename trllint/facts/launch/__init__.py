"""The launch model: how a project's code may run (``model.py``), from its launch configs and
scripts (``project.py``, ``configs.py``, ``commands.py``) and its own code (``code.py``)."""

# How the result cache names a project's launch files among a result's dependencies (here, so
# that a warm run checks them without importing the launch model, which imports LibCST).
LAUNCH_SOURCES = "launch-sources:"
