"""The About & downloads tab: the protocol in short, file formats, and the public files of a track."""

from __future__ import annotations

import gradio as gr

from space.uploads import output_dir

from .. import i18n
from ..context import Context, refused
from ..i18n import both, t
from .explorer import dev_file


class AboutPage:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.about = ctx.texts(gr.Markdown(elem_id="about"), value=i18n.about)
        with gr.Row():
            self.run_btn = gr.Button(both("get_files"), elem_id="dl-run")
        self.files = gr.File(
            file_count="multiple", interactive=False, label=both("files"), visible=False, elem_id="dl-files"
        )

    def wire(self, track: gr.Radio, lang: gr.Radio) -> None:
        """`track` is the shell's one track selector."""
        self.run_btn.click(self.downloads, [track, lang], self.files, api_name="downloads")

    def downloads(self, track: str, lang: str = "zh") -> gr.File:
        """Public test inputs and dev split of a track, as files."""
        out = output_dir()
        files = []
        for name in ("test_inputs.jsonl", "dev.jsonl"):
            data = self.ctx.service.public_file(track, name)
            if data is None and name == "dev.jsonl":
                data = dev_file(self.ctx, track)
            if data:
                p = out / f"{track}-{name}"
                p.write_bytes(data)
                files.append(str(p))
        if not files:
            raise refused(t("no_public_files", lang))
        return gr.File(value=files, visible=True)
