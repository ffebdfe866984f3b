"""What the extractor's modules raise for input the user can fix: a folder, log line or systems
file, named in the message. mlperf_extract.py turns it into one line on stderr and exit 2.
"""


class BadInput(Exception):
    pass
