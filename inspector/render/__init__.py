"""Rich renderables shared by the CLI and the TUI. May import core; never Textual."""
