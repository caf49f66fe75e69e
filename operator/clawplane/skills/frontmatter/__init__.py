"""A ``SKILL.md`` frontmatter reader that mirrors OpenClaw's parser.

``reader`` finds the block and parses it the way OpenClaw does: as YAML (``yamlcore`` composes
it, ``yamlindent`` checks continuation lines, ``yamlvalues`` turns nodes into the JavaScript
values ``yaml``'s ``toJS`` gives), with the line-based ``key: value`` reader beside it;
``simpleblock`` is the fast path for the plain blocks most skills have.
"""

from clawplane.skills.frontmatter.reader import (
    FrontmatterError,
    extract_block,
    normalize_content,
    parse_line_frontmatter,
    parse_skill_frontmatter,
)

__all__ = [
    "FrontmatterError",
    "extract_block",
    "normalize_content",
    "parse_line_frontmatter",
    "parse_skill_frontmatter",
]
