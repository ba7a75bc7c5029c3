"""Sources: files, folders, logs and live streams turned into core artifacts.

Formats are detected by content, not by file name. Nothing here ever writes into a
source folder. May import `inspector.core`; never Textual or Rich.
"""
