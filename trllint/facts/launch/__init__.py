"""The launch model: how a project's code may run (``model.py``), from its launch configs and
scripts (``project.py``, ``configs.py``, ``commands.py``) and its own code (``code.py``)."""
