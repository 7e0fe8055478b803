"""A file drop zone whose prompt follows the page's language.

Gradio 6.31 writes its own prompt into `gr.File` ("Drop File Here - or - Click to Upload") in the browser's
locale, with no per-component text, and relabelling it through Gradio's `changeLocale` did not work
(measured). So that text is hidden (the upload icon stays) and a Markdown of ours, bound to the language
toggle, lies over the zone; it lets clicks and drops through, and it goes away with the prompt once a file
is in. Drag-and-drop, click-to-upload, size limits and the File's events are Gradio's, unchanged.
"""

from __future__ import annotations

import gradio as gr

from .i18n import Localised, both

CSS = """
.upload-box { position: relative; }
.upload-box [data-testid=upload-text] { visibility: hidden; font-size: 0; }
.upload-box [data-testid=upload-text] .icon-wrap { visibility: visible; }
.upload-box .block.upload-prompt { position: absolute; left: 0; right: 0; top: 60%; text-align: center;
  pointer-events: none; color: var(--body-text-color-subdued); }
.upload-box .upload-prompt p { margin: 0; }
.upload-box:not(:has([data-testid=upload-text])) .block.upload-prompt { display: none; }
"""


def drop_zone(texts: Localised, label: str, elem_id: str) -> gr.File:
    """A `gr.File` for one predictions file (label: a `TEXT` key) with the localised prompt over it."""
    with gr.Column(elem_classes=["upload-box"]):
        upload = gr.File(
            label=both(label),
            file_types=[".jsonl", ".json", ".txt"],
            type="filepath",
            elem_id=elem_id,
        )
        texts(gr.Markdown(elem_id=f"{elem_id}-prompt", elem_classes=["upload-prompt"]), value="upload_prompt")
    return upload
