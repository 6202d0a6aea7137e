"""Parsing, OCR and conversion of one file in a child process with memory and time limits (:mod:`.child`, run by
:mod:`.runner`). No Django in this package: a hostile file can only harm the child."""
