"""Question kinds: binary, multiple choice, numeric. What differs between them lives here, behind one
interface (:class:`~agent_schemas.kinds.base.QuestionKind`; its module docstring explains the seam).

To add a kind: a sub-package with its spec (a :class:`~agent_schemas.kinds.base.KindSpec` with a ``kind``
literal) and its :class:`~agent_schemas.kinds.base.QuestionKind`, and one line in :data:`KINDS` below.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from agent_schemas.kinds.base import KindSpec, QuestionKind
from agent_schemas.kinds.binary import BINARY, BinarySpec
from agent_schemas.kinds.multiple_choice import MULTIPLE_CHOICE, ChoiceSpec
from agent_schemas.kinds.numeric import NUMERIC, NumericSpec

__all__ = ["DEFAULT_KIND", "AnySpec", "BinarySpec", "ChoiceSpec", "KINDS", "KindSpec", "NumericSpec", "QuestionKind", "kind_named", "kind_of"]

#: Every kind by name, in the order reports show them.
KINDS: dict[str, QuestionKind] = {k.name: k for k in (BINARY, MULTIPLE_CHOICE, NUMERIC)}

#: The kind of a question that states none (a question file without a ``kind`` column or spec columns).
DEFAULT_KIND = "binary"

#: The spec of a question of any kind, told apart by its ``kind`` field (a pydantic discriminated union).
AnySpec = Annotated[Union[tuple(k.spec_type for k in KINDS.values())], Field(discriminator="kind")]  # noqa: UP007


def kind_named(name: str) -> QuestionKind:
    """The kind called ``name``.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown question kind {name!r}; known: {', '.join(KINDS)}") from None


def kind_of(spec: KindSpec) -> QuestionKind:
    """The kind of a question's spec (``question.spec``)."""
    return kind_named(spec.kind)
