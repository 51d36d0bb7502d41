"""Hangs explained: tt-metal's watcher.log read (:mod:`.log`, with what each era of the file looks
like in :mod:`.formats`) into typed dumps (:mod:`.records`), the kernel that waits for what named
from them (:mod:`.diagnose`), and the DPRINT lines about circular buffers picked out of a test's
console output (:mod:`.dprint`). Pure: text in, records out; the one function that reads a file
is :func:`lnrepro.hang.watcher.log.parse_file`.
"""
