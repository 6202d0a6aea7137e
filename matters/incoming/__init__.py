"""Incoming productions: the other side's Bates-numbered volumes. No Django in this package."""
