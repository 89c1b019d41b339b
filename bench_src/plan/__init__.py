"""Plan: what a run will sample.  `make_plan` validates the user's parameters into a `Plan`; a plan
holds its cells (workload x language x variant x N x parameters) and their schedule of slots."""
from .model import Cell, Plan, Slot, plan_from_dict, stored_plan_problem
from .validate import make_plan

__all__ = ["Cell", "Plan", "Slot", "make_plan", "plan_from_dict", "stored_plan_problem"]
