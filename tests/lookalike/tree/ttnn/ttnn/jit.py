import re

_CONST = re.compile(r"constexpr\s+uint32_t\s+(\w+)\s*=\s*(\d+)\s*;")


def constants(root, kernel):
    """The `constexpr uint32_t NAME = N;` lines of a kernel source: what the op was built with."""
    text = (root / kernel).read_text(encoding="utf-8")
    return {m.group(1): int(m.group(2)) for m in _CONST.finditer(text)}
