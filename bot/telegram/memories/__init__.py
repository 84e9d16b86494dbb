"""/memory: its commands, buttons, texts and the Markdown export; imports no wiring."""
