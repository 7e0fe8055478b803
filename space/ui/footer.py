"""The page footer in the page's language.

Gradio 6.31 writes its own footer ("Use via API · Built with Gradio · Settings") in the browser's locale,
with no per-app text (its `common.*` strings cannot be overridden through `gr.I18n`). So this module's CSS
hides that footer and an HTML block of ours, bound to the language toggle, offers the same things: Gradio's
API page and its settings panel (light/dark theme), FastAPI's REST docs, and the credit.

Gradio draws its API page and settings panel only after its own footer button loaded them (a `?view=api`
link alone shows nothing), so the web process mounts Gradio with `GRADIO_FOOTER_LINKS` (the buttons
exist, hidden) and our two buttons click Gradio's.
"""

from __future__ import annotations

from html import escape

import gradio as gr

from .i18n import Localised, t

# What `gr.mount_gradio_app(footer_links=...)` gets: the buttons our footer passes its clicks to.
GRADIO_FOOTER_LINKS = ["api", "settings"]

# Gradio's footer is the one right under its main wrapper; ours sits inside the app's layout.
GRADIO_FOOTER = ".gradio-container > .main > .wrap > footer"
CSS = f"""
{GRADIO_FOOTER} {{ display: none !important; }}
#site-footer {{ text-align: center; font-size: var(--text-sm); color: var(--body-text-color-subdued);
  margin-top: var(--size-4); }}
#site-footer a, #site-footer button {{ color: inherit; margin: 0 var(--size-2); white-space: nowrap;
  text-decoration: underline; font: inherit; background: none; border: 0; padding: 0; cursor: pointer; }}
"""

# A click on one of our buttons is a click on Gradio's hidden one (delegated: the block's HTML is replaced
# when the language changes, the listener on the block stays).
OPEN_GRADIO_VIEW = f"""
element.addEventListener('click', (event) => {{
  const mine = event.target.closest('button[data-gradio]');
  if (!mine) return;
  document.querySelector(`{GRADIO_FOOTER} button.${{mine.dataset.gradio}}`)?.click();
}});
"""


def footer_html(lang: str) -> str:
    """The footer in `lang`: buttons for Gradio's API page and settings panel, links to the REST docs
    (FastAPI's, next to the UI) and to Gradio."""
    items = (
        f'<button type="button" data-gradio="show-api">{escape(t("footer_api", lang))}</button>',
        f'<a href="docs">{escape(t("footer_rest", lang))}</a>',
        f'<button type="button" data-gradio="settings">{escape(t("footer_settings", lang))}</button>',
        f'<a href="https://www.gradio.app" target="_blank" rel="noopener noreferrer">'
        f"{escape(t('footer_gradio', lang))}</a>",
    )
    return f'<nav aria-label="{escape(t("footer_nav", lang))}">{" · ".join(items)}</nav>'


def site_footer(texts: Localised) -> gr.HTML:
    """The footer block, bound to the language toggle."""
    return texts(gr.HTML(elem_id="site-footer", js_on_load=OPEN_GRADIO_VIEW), value=footer_html)
