"""ToxiTrace protocol tracks: COLD, ToxiCN and CNTP (classification, and toxic spans for CNTP).

Binding contract: ``docs/spec/toxitrace-protocol.md``. Pure library: no Celery, Gradio or Hub imports.

Label policy (references and predictions alike): a label is the JSON number ``0`` or ``1``.
Strings (``"1"``), booleans (``true``), floats (``1.0``) and ``null`` are rejected with a line-numbered
message; nothing is coerced, so a file means the same thing to every reader.

Span policy: a span is ``[start, end]`` (code-point offsets into the item's text, end exclusive) or a
non-empty string located at its first occurrence in the text. Overlapping and adjacent spans are merged;
every metric is computed on the set of character indices covered, so merging never changes a score.
"""
