"""Backend-neutral model IR: named variable groups, sparse constraint blocks, linear objective.

>>> from odtkit.model import ModelBuilder
>>> b = ModelBuilder("toy")
>>> x = b.add_vars("x", shape=3, kind="binary")
>>> _ = b.add_constraints("pick", rows=[0, 0, 0], cols=x.index, vals=1.0, sense="==", rhs=[1.0])
>>> b.add_objective(x.index, [3.0, 1.0, 2.0])
>>> model = b.build()
>>> model.n_vars, model.n_constraints
(3, 1)
"""

from odtkit.model._builder import SENSES, ModelBuilder
from odtkit.model._model import VAR_KINDS, ConstraintBlock, Model, VarGroup

__all__ = ["ConstraintBlock", "Model", "ModelBuilder", "SENSES", "VAR_KINDS", "VarGroup"]
