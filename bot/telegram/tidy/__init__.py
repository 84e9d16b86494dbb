"""/memory tidy: commands, buttons, views, texts and the nightly pass; imports no wiring."""
