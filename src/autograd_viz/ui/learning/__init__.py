"""The lab, lessons, quiz and exercises panes."""
