"""The report page's stylesheet, inlined so the HTML file stands alone."""

from __future__ import annotations

STYLESHEET = """
:root { --ok: #2f9e5b; --drift: #c6423a; --warn: #d98c1f; --waived: #6f6fbf; --muted: #6b7280; --unknown: #4f6d8f;
        --line: #dde1e6; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; background: var(--bg); color: #1f2328;
       font: 14px/1.45 "DejaVu Sans", "Segoe UI", Arial, sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0; display: flex; gap: 10px; align-items: center; word-break: break-all; }
h3 { font-size: 14px; margin: 18px 0 6px; color: #374151; }
.run { color: var(--muted); margin: 0 0 18px; }
.run code { color: #1f2328; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 18px; }
.card { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--muted); border-radius: 6px;
        padding: 8px 14px; min-width: 118px; }
.card b { display: block; font-size: 24px; }
.card span { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card.compliant { border-left-color: var(--ok); } .card.drift { border-left-color: var(--drift); }
.card.unreachable { border-left-color: var(--warn); } .card.error { border-left-color: var(--warn); }
.card.unverified, .card.unknown_checks { border-left-color: var(--unknown); }
.card.warnings { border-left-color: #e0b400; }
.notice { background: #fff7e6; border: 1px solid #f1c27d; border-radius: 6px; padding: 10px 14px; margin-bottom: 14px; }
.notice h3 { margin-top: 0; }
.notice ul { margin: 4px 0 0; padding-left: 20px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 18px; margin-bottom: 18px; }
.scroll { overflow-x: auto; }
table.grid { border-collapse: collapse; font-size: 13px; }
table.grid th, table.grid td { border: 1px solid var(--line); padding: 5px 8px; text-align: center;
                               white-space: nowrap; }
table.grid th.check { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: 600; padding: 8px 4px; }
table.grid th.host, table.grid td.host { text-align: left; }
table.grid a { color: inherit; }
.cell-pass { background: #e3f4ea; color: #1d6b3d; }
.cell-fail { background: #fbe3e1; color: #9b2c25; font-weight: 700; }
.cell-error { background: #fdf0d9; color: #8a5a0f; font-weight: 700; }
.cell-waived { background: #ebebf8; color: #4a4a94; }
.cell-skipped { background: #f2f2f2; color: #777; }
.cell-unknown { background: #e2e8f1; color: #2f4a6b; font-weight: 700; }
.cell-warn { background: #fff4c2; color: #7a5d00; font-weight: 700; }
.cell-none { color: #b3b8bf; }
.cell-unreachable { background: #fdf0d9; color: #8a5a0f; text-align: left !important; }
.badge { display: inline-block; border-radius: 10px; padding: 1px 10px; font-size: 12px; font-weight: 600; color: #fff;
         text-transform: uppercase; letter-spacing: .03em; }
.badge.compliant { background: var(--ok); } .badge.drift { background: var(--drift); }
.badge.unreachable, .badge.error { background: var(--warn); }
.badge.unverified { background: var(--unknown); } .badge.warnings { background: #fff4c2; color: #7a5d00; }
.host-body { display: flex; flex-wrap: wrap; gap: 24px; margin-top: 12px; }
.host-items { flex: 1 1 520px; min-width: 0; }
.gpu { flex: 0 0 auto; }
.gpu p { margin: 0 0 6px; color: #374151; }
details { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; background: #fbfbfc; }
summary { cursor: pointer; padding: 6px 10px; }
summary .id { font-family: "DejaVu Sans Mono", monospace; font-weight: 700; }
details > div { padding: 0 12px 10px; }
pre { margin: 6px 0 0; padding: 8px 10px; background: #f3f4f6; border-radius: 4px; overflow-x: auto;
      font: 12px/1.4 "DejaVu Sans Mono", Consolas, monospace; white-space: pre; }
pre .add { color: #116329; background: #e6f6ea; display: block; }
pre .del { color: #9b2c25; background: #fbeaea; display: block; }
pre .hunk { color: #5057a6; display: block; }
.muted { color: var(--muted); }
dl.values { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0 0; }
dl.values dt { color: var(--muted); } dl.values dd { margin: 0; }
table.bycheck { border-collapse: collapse; font-size: 13px; width: 100%; }
table.bycheck th, table.bycheck td { border: 1px solid var(--line); padding: 5px 8px; vertical-align: top; }
table.bycheck td.id { font-family: "DejaVu Sans Mono", monospace; font-weight: 700; white-space: nowrap; }
table.bycheck td.hosts { font-size: 12px; }
table.bycheck td.hosts a { color: inherit; white-space: nowrap; }
details.more { display: inline; border: 0; background: none; margin: 0; }
details.more summary { display: inline; padding: 0 4px; color: var(--muted); }
ul.folded { list-style: none; margin: 8px 0 0; padding: 0; columns: 3 420px; font-size: 12px; }
ul.folded li { padding: 2px 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
ul.folded .badge { font-size: 10px; padding: 0 6px; }
footer { color: var(--muted); font-size: 12px; margin-top: 24px; }
"""
