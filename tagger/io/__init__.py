"""Reading and writing files, with the guarantees around them.

Reads papers from paper lists, JSON Lines, JSON arrays, CSV/TSV and Parquet (:mod:`.readers`, the
format told by :mod:`.formats`, a paper list's headers and paragraphs by :mod:`.paperlist`, the
files of a run and of a directory among its inputs by :mod:`.inputs`), one ``Paper`` or
``InputError`` per record; writes tagged output as JSON Lines (:mod:`.jsonl`) or
Parquet (:mod:`.parquet`) and reads it back through one reader (:mod:`.tagged`); keeps the file
guarantees (:mod:`.files`: bounded lines, outputs that are inputs refused, locks) and says what
messages print (:mod:`.display`: safe text, short paths, progress bars). Hands records to every
stage above it. Imports only the core.
"""
