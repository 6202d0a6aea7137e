"""The topology as a picture: server-side SVG, no script. Each host is a band; each board a group of GPU boxes
(memory, and live memory use and utilization where NVML can read them) joined by their NVLink lines, with the
servers pinned to it below (roles, status colour, last decode tok/s). Plus one decode-speed chart per server.
All text is escaped; the result is marked safe for templates."""

from dataclasses import dataclass, field
from datetime import datetime

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

STATUS_COLOURS = {"up": "#2e7d32", "slow": "#b26a00", "busy": "#6a1b9a", "loading": "#1565c0", "down": "#c62828"}
UNKNOWN = "#757575"
GPU_W, GPU_H, GAP, PAD, TITLE_H, SERVER_H = 132, 62, 28, 12, 22, 40
MAX_WIDTH = 1160


@dataclass
class GpuBox:
    index: int
    name: str
    memory_total_mib: int
    memory_used_mib: int | None = None
    utilization_pct: int | None = None


@dataclass
class ServerTag:
    name: str
    roles: list[str]
    status: str | None
    decode_tok_s: float | None
    enabled: bool = True


@dataclass
class BoardGroup:
    name: str
    kind_label: str
    gpus: list[GpuBox]
    links: list[tuple[int, int, int]] = field(default_factory=list)  # (index a, index b, lanes)
    servers: list[ServerTag] = field(default_factory=list)
    broken: bool = False


@dataclass
class HostBand:
    name: str
    address: str
    boards: list[BoardGroup]


def _text(x: float, y: float, content: str, *, size: int = 12, weight: str = "normal", fill: str = "#222",
          anchor: str = "start") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="{weight}" fill="{fill}" '
            f'text-anchor="{anchor}">{escape(content)}</text>')


def _board_size(board: BoardGroup) -> tuple[int, int]:
    columns = 2 if len(board.gpus) > 1 else 1
    rows = (len(board.gpus) + columns - 1) // columns or 1
    width = PAD * 2 + columns * GPU_W + (columns - 1) * GAP
    height = TITLE_H + PAD + rows * GPU_H + (rows - 1) * GAP + PAD + max(1, len(board.servers)) * SERVER_H
    return max(width, 300), height


def _gpu_box(x: float, y: float, gpu: GpuBox) -> str:
    parts = [f'<rect x="{x:.0f}" y="{y:.0f}" width="{GPU_W}" height="{GPU_H}" rx="4" fill="#fff" stroke="#555"/>',
             _text(x + 6, y + 15, f"GPU {gpu.index}", weight="bold"),
             _text(x + 6, y + 29, gpu.name.replace("NVIDIA ", "")[:24], size=10, fill="#555"),
             _text(x + GPU_W - 6, y + 15, f"{gpu.memory_total_mib / 1024:.0f} GiB", size=11, anchor="end")]
    if gpu.memory_used_mib is not None and gpu.memory_total_mib:
        used = min(1.0, gpu.memory_used_mib / gpu.memory_total_mib)
        parts += [f'<rect x="{x + 6:.0f}" y="{y + 37:.0f}" width="{GPU_W - 12}" height="8" fill="#e0e0e0"/>',
                  f'<rect x="{x + 6:.0f}" y="{y + 37:.0f}" width="{(GPU_W - 12) * used:.0f}" height="8" '
                  'fill="#5c6bc0"/>']
        utilization = f", {gpu.utilization_pct}% busy" if gpu.utilization_pct is not None else ""
        parts.append(_text(x + 6, y + 57, f"{gpu.memory_used_mib / 1024:.1f} GiB used{utilization}", size=10))
    else:
        parts.append(_text(x + 6, y + 52, "use: not read here", size=10, fill="#888"))
    return "".join(parts)


def _board(x: float, y: float, board: BoardGroup) -> str:
    width, height = _board_size(board)
    stroke = "#c62828" if board.broken else "#90a4ae"
    parts = [f'<g class="board"><rect x="{x:.0f}" y="{y:.0f}" width="{width}" height="{height}" rx="8" '
             f'fill="#eceff1" stroke="{stroke}" stroke-width="2"/>',
             _text(x + PAD, y + 16, f"{board.name} · {board.kind_label}", weight="bold")]
    columns = 2 if len(board.gpus) > 1 else 1
    centres, boxes = {}, []
    for position, gpu in enumerate(board.gpus):
        gx = x + PAD + (position % columns) * (GPU_W + GAP)
        gy = y + TITLE_H + PAD + (position // columns) * (GPU_H + GAP)
        centres[gpu.index] = (gx + GPU_W / 2, gy + GPU_H / 2)
        boxes.append(_gpu_box(gx, gy, gpu))
    for a, b, lanes in board.links:
        if a in centres and b in centres:
            (x1, y1), (x2, y2) = centres[a], centres[b]
            parts.append(f'<line class="nvlink" x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" '
                         f'stroke="#43a047" stroke-width="{2 + 2 * min(lanes, 4)}" stroke-opacity="0.7"/>')
    parts += boxes
    sy = y + height - max(1, len(board.servers)) * SERVER_H
    if not board.servers:
        parts.append(_text(x + PAD, sy + 20, "no server pinned", size=11, fill="#888"))
    for server in board.servers:
        colour = STATUS_COLOURS.get(server.status or "", UNKNOWN)
        speed = f"{server.decode_tok_s:.1f} tok/s" if server.decode_tok_s is not None else "no speed yet"
        state = server.status or "not probed"
        if not server.enabled:
            state = "disabled"
        parts += [f'<rect x="{x + PAD:.0f}" y="{sy + 4:.0f}" width="{width - 2 * PAD}" height="{SERVER_H - 6}" '
                  f'rx="4" fill="#fff" stroke="{colour}" stroke-width="2"/>',
                  f'<circle cx="{x + PAD + 12:.0f}" cy="{sy + 18:.0f}" r="6" fill="{colour}"/>',
                  _text(x + PAD + 24, sy + 17, server.name, weight="bold"),
                  _text(x + PAD + 24, sy + 32, ", ".join(server.roles) or "no role", size=10, fill="#555"),
                  _text(x + width - PAD - 6, sy + 17, f"{state} · {speed}", size=11, fill=colour, anchor="end")]
        sy += SERVER_H
    parts.append("</g>")
    return "".join(parts)


def topology_svg(hosts: list[HostBand]) -> SafeString:
    """Draw every host with its boards; return an ``<svg>`` element."""
    parts, y, widest = [], 10, 0
    for host in hosts:
        parts.append(_text(10, y + 18, f"{host.name}" + (f" ({host.address})" if host.address else ""),
                           size=15, weight="bold"))
        y += 30
        x, row_height = 10, 0
        for board in host.boards:
            width, height = _board_size(board)
            if x > 10 and x + width > MAX_WIDTH:
                x, y = 10, y + row_height + 16
                row_height = 0
            parts.append(_board(x, y, board))
            x += width + 16
            widest, row_height = max(widest, x), max(row_height, height)
        if not host.boards:
            parts.append(_text(10, y + 14, "no boards yet: run discovery or add them in the admin", fill="#888"))
            row_height = 20
        y += row_height + 24
    width = max(widest, 400)
    return mark_safe(f'<svg xmlns="http://www.w3.org/2000/svg" class="topology" width="{width}" height="{y}" '
                     f'viewBox="0 0 {width} {y}" role="img" aria-label="Model topology">{"".join(parts)}</svg>')


def speed_chart_svg(points: list[tuple[datetime, float]], *, floor_tok_s: float, width: int = 520,
                    height: int = 140) -> SafeString:
    """Decode tok/s over time for one server: a line of ``points`` (time, tok/s) and a dashed floor line."""
    left, right, top, bottom = 46, 10, 10, 24
    if not points:
        return mark_safe(f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="40">'
                         f'{_text(4, 24, "no measurement yet", fill="#888")}</svg>')
    points = sorted(points)
    top_value = max(max(v for _, v in points), floor_tok_s) * 1.15 or 1.0
    start, end = points[0][0], points[-1][0]
    span = (end - start).total_seconds() or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def place(when: datetime, value: float) -> tuple[float, float]:
        x = left + plot_w * ((when - start).total_seconds() / span if len(points) > 1 else 0.5)
        return x, top + plot_h * (1 - value / top_value)

    line = " ".join("%.1f,%.1f" % place(when, value) for when, value in points)
    floor_y = top + plot_h * (1 - floor_tok_s / top_value)
    parts = [f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" stroke="#999"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#999"/>',
             _text(left - 4, top + 10, f"{top_value:.0f}", size=10, anchor="end"),
             _text(left - 4, top + plot_h, "0", size=10, anchor="end"),
             f'<line class="floor" x1="{left}" y1="{floor_y:.1f}" x2="{width - right}" y2="{floor_y:.1f}" '
             'stroke="#b26a00" stroke-dasharray="5,4"/>',
             _text(width - right, floor_y - 3, f"floor {floor_tok_s:g}", size=10, fill="#b26a00", anchor="end"),
             f'<polyline class="decode" points="{line}" fill="none" stroke="#1565c0" stroke-width="2"/>',
             *(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="#1565c0"/>'
               for x, y in (place(w, v) for w, v in points)),
             _text(left, height - 6, f"{start:%Y-%m-%d %H:%M}", size=10, fill="#555"),
             _text(width - right, height - 6, f"{end:%Y-%m-%d %H:%M}", size=10, fill="#555", anchor="end")]
    return mark_safe(f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
                     f'viewBox="0 0 {width} {height}" role="img" aria-label="decode tok/s over time">'
                     f'{"".join(parts)}</svg>')
