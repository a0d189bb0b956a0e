"""The rules that turn what an acceptance job measured into a verdict, each written so that it can fail (issue 53 §2).

- :func:`fused_verdict`: a fused stack trains each member as its solo run. Each member's training loss must equal
  its own seed's solo loss within the tolerance, and the seeds' solo losses must lie further apart than twice the
  tolerance: otherwise a stack whose members were permuted, trained on another member's batches or not trained
  at all would pass as well, and the row measures nothing (it fails, saying so).
- :func:`memory_verdict`: the plan sizes stacks and splits batches from pipeline/budget/memory.py's estimate, so a
  measured peak above the estimate by more than :data:`MEMORY_MARGIN` fails: the plan must never size a job
  that runs out of memory. A peak well below it is kept and corrected (the factor the plan applies).
- :func:`floor_fit`: the step floor the plan applies (each job at least its steps x the floor) is what a step
  costs beyond its FLOPs: the intercept of a least-squares line through the measured shapes' (FLOPs, seconds) a
  step, per Transformer layer. Fewer than two distinct shapes, an intercept under 1 µs or a slope not above
  zero, or a line that misses a shape by more than :data:`FLOOR_RESIDUAL` of its time fail: the floor would be a
  guess.
- :func:`ddp_verdict`: two DDP processes at half the batch each give the weights of one process at the whole
  batch (docs/stages/pretrain.md: the MLM loss is averaged over the global batch's masked tokens).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

# |member loss - solo loss| (docs/stages/classify.md: fused = solo to 4 decimals in float32, TF32 off)
FLOAT32_TOLERANCE = 1e-4
# bf16 autocast: the stacked and the single matrix products round differently (an 8-bit mantissa), so the bf16
# row's bound is a share of the seeds' own spread, stated beside it: a member must be nearer its own seed's
# solo run than a tenth of the distance between the two nearest seeds
BF16_SHARE_OF_SPREAD = 0.1
MEMORY_MARGIN = 0.10  # a peak up to 10% above the estimate is allocator noise the HEADROOM absorbs
MEMORY_LOW = 0.15  # a peak more than 15% below: the estimate is corrected (acceptance.yaml memory_factor)
FLOOR_RESIDUAL = 0.25  # a shape's step time off the fitted line by more than this share: no line describes them
FLOOR_LEAST_S = 1e-6  # a floor under 1 µs a layer is none (acceptance_file.py's least step_floor_per_layer_ms)
DDP_TOLERANCE = {"cpu": 1e-4, "cuda": 2e-2}  # ||two-process update - one-process update|| / ||update||


@dataclass(frozen=True)
class Verdict:
    ok: bool
    result: str


def closest_seeds(solo: dict) -> float:
    """The smallest distance between two seeds' solo losses (inf with fewer than two seeds)."""
    return min((abs(a - b) for a, b in combinations(solo.values(), 2)), default=math.inf)


def fused_verdict(solo: dict, fused: dict, tolerance: float | None = None) -> Verdict:
    """``solo`` and ``fused``: seed -> training loss. ``tolerance`` None: bf16, a share of the seeds' spread."""
    if not solo or set(fused) != set(solo):
        return Verdict(False, f"seeds differ: solo {sorted(solo)}, fused {sorted(fused)}")
    values = [*solo.values(), *fused.values()]
    if not all(math.isfinite(v) for v in values):
        return Verdict(False, "a loss is not finite")
    gap = closest_seeds(solo)
    bound = BF16_SHARE_OF_SPREAD * gap if tolerance is None else tolerance
    diff = max(abs(fused[s] - solo[s]) for s in solo)
    text = f"max |member - solo| loss {diff:.2e}, tolerance {bound:.1e}; nearest seeds {gap:.2e} apart"
    if len(solo) > 1 and gap <= 2 * bound:
        return Verdict(False, text + ": the seeds are too close for the row to tell a permuted stack")
    return Verdict(diff <= bound, text)


def memory_verdict(peak: float | None, estimate: float | None) -> tuple[str, str, float | None]:
    """(verdict, text, factor) of a job's measured ``peak`` against the memory model's ``estimate`` (bytes):
    ``FAIL`` above it by more than :data:`MEMORY_MARGIN`, ``corrected`` more than :data:`MEMORY_LOW` below it
    (the plan scales the estimate by the factor), ``ok`` between."""
    if not peak or not estimate:
        return "FAIL", "no peak or no estimate", None
    factor = peak / estimate
    text = f"estimate {estimate / 1e9:.2f} GB, peak {peak / 1e9:.2f} GB ({factor:.2f}x)"
    if factor > 1 + MEMORY_MARGIN:
        return "FAIL", text + f": above the estimate by more than {MEMORY_MARGIN:.0%} (the plan would run out)", factor
    if factor < 1 - MEMORY_LOW:
        return "corrected", text + f": more than {MEMORY_LOW:.0%} below (the plan's estimate is scaled by it)", factor
    return "ok", text, factor


def update_distance(start: dict, one: dict, two: dict) -> float:
    """||two - one|| / ||one - start|| over every parameter: how far the two-process weights are from the
    one-process weights, as a share of the change one process's training made."""
    moved = sum(float(((one[k].float() - start[k].float()) ** 2).sum()) for k in start)
    apart = sum(float(((two[k].float() - one[k].float()) ** 2).sum()) for k in start)
    if moved == 0:
        return math.inf if apart else 0.0
    return math.sqrt(apart / moved)


def ddp_verdict(start: dict, one: dict, two: dict, tolerance: float) -> Verdict:
    """Two processes' weights against one's, after the same steps from the same ``start``."""
    shared = set(one) & set(start)  # the trained weights the start had (a saved model may add its heads' ties)
    if set(one) != set(two) or not shared:
        return Verdict(False, "the checkpoints hold different parameters")
    distance = update_distance({k: start[k] for k in shared}, one, two)
    return Verdict(
        distance <= tolerance,
        f"||2 processes - 1 process|| = {distance:.1e} of the update (tolerance {tolerance:g})",
    )


def floor_fit(points: list[tuple[float, float]]) -> tuple[Verdict, float]:
    """(verdict, intercept) of the line seconds = floor + FLOPs / rate through ``points`` (FLOPs, seconds) of one
    step of each measured shape, by least squares."""
    if len({x for x, _ in points}) < 2:
        return Verdict(False, f"{len(points)} shape(s) measured: a line needs two of different FLOPs"), 0.0
    n = len(points)
    mean_x, mean_y = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    floor = mean_y - slope * mean_x
    worst = max(abs(y - floor - slope * x) / y for x, y in points)
    rate = f"{1 / slope / 1e12:.3g} TFLOP/s" if slope > 0 else "no rate"
    text = f"floor {1000 * floor:.4f} ms, {rate} beyond it; worst shape {worst:.0%} off the line"
    if floor < FLOOR_LEAST_S or slope <= 0:
        return Verdict(
            False, text + ": no positive floor and rate (the steps are not time = floor + FLOPs / rate)"
        ), 0.0
    if worst > FLOOR_RESIDUAL:
        return Verdict(False, text + f": more than {FLOOR_RESIDUAL:.0%} off"), floor
    return Verdict(True, text), floor
