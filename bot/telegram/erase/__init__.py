"""/delete_my_data: its command, buttons and texts; imports no wiring."""
