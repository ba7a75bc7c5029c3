"""Screens: the browser, the context view, the sweep view and the help screen."""
