"""The Telegram assistant: wiring on top of three layers.

app.py, settings.py, __main__.py (with log_setup.py and migrations.py) wire it together: settings
-> engine, stores, model client, Application. Below them, dependencies point down only:
telegram/ (the only package that imports telegram) -> agent/ -> conversations/ -> memory/.
"""
