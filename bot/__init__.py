"""The Telegram assistant: wiring on top of three layers.

app.py, compose.py, settings.py, __main__.py (with log_setup.py and migrations.py) wire it
together: settings -> engine, stores, model client (compose.py, the one place services are
built), Application (app.py). Below them, dependencies point down only:
telegram/ (the only package that imports telegram) -> agent/ -> conversations/ -> memory/.
"""
