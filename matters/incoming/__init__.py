"""Incoming productions: the other side's Bates-numbered volumes. The archive, load-file, encoding and stamp
readers (:mod:`.archive`, :mod:`.loadfiles`, :mod:`.encoding`, :mod:`.stamped`) use no Django; the import
services (:mod:`.services`) and pages (:mod:`.views`, :mod:`.urls`) build exhibits from them."""
