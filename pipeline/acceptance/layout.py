"""What the GPU acceptance run starts (docs/stages/acceptance.md): the models, the sizes of each form (CUDA: the
papers' shapes; CPU: tiny ones), the fused pairs and the process batches they run in, and the rows a run must
have. pipeline/acceptance/rows.py runs them; pipeline/acceptance/run_time.py counts their time from here, so a
row or job added here is in the estimate (tests/test_gpu_acceptance.py checks the two against each other)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pipeline.acceptance import estimates, jobs

# every objective the paper configs train (paper-en: MiSAD and its span and entity variants with the released
# loss, the equation in its ulr-electra experiment), and wwm and entity, which the configs offer; .released: the
# released run_mse.py's loss (--misad-loss released --pooling pooler)
PRETRAIN_OBJECTIVES = [
    "mlm", "wwm", "burt", "spanbert", "entity", "misad", "misad.released", "misad-span.released",
    "misad-entity.released", "nsp", "sop",
]  # fmt: skip
PRETRAIN_RUNS = [("bert-base", label) for label in PRETRAIN_OBJECTIVES]
PRETRAIN_RUNS += [("electra-base", "misad"), ("albert-xxlarge", "misad.released")]  # ULR-ELECTRA; Table 2's xxlarge
QUICK_PRETRAIN = [("bert-base", "mlm"), ("bert-base", "misad.released"), ("electra-base", "misad")]
# pre-training MFU at every size and input the plan applies it to (issue 53 §3): MLM on base (``bert-base+mlm``
# above), large and xxlarge, single sentences (128 tokens, batch 64) and 512-token packed blocks (batch 16, as the
# paper configs' BURT runs); their step times against their FLOPs give the step floor (rows.py ``floor_row``)
SHAPE_RUNS = [("bert-large", "mlm"), ("albert-xxlarge", "mlm")]
SHAPE_RUNS += [(backbone, "mlm.packed") for backbone in ("bert-base", "bert-large")]  # no config packs xxlarge
QUICK_SHAPE_RUNS = [("bert-base", "mlm.packed")]
SIZE = {"bert-base": "base", "bert-large": "large", "albert-xxlarge": "xxlarge"}  # backbone_family.size_of's names
FP32_K = 4
BASE_K = estimates.PAPER_FUSE
RESUME_K = 2  # a save holds K members' weights and AdamW moments (5 GB at K 4 on BERT-base): kept small
FINETUNE_DROPOUT = 0.1  # the papers' fine-tuning dropout (ULR-BERT §5.1.2): memory is measured at it
# the plan's keys (pipeline/plan/plan_costs.py objective_mfu) of the runs not on BERT-base
MFU_KEYS = {"electra-base+misad": "electra+misad", "albert-xxlarge+misad.released": "albert-xxlarge+misad"}
FLOOR_ROW = "step time = floor + FLOPs / rate"  # the step floor's row (rows.py floor_row)
CHID_ROW = "wwm-ext ChID 256"  # the multiple-choice pair's row (its K in its measure)
FP32 = {"NVIDIA_TF32_OVERRIDE": "0"}  # cuBLAS and cuDNN: no TF32 in the float32 jobs, whatever torch's flags say
DDP_STEPS = 4
MEMORY_STEPS = 4  # a stack's peak is reached at its first optimizer step (AdamW's moments made): a few suffice
QUICK_LEAVES_OUT = ("bert-large", "albert-xxlarge", "wwm-ext")  # models --quick does not build (no row of theirs runs)


@dataclass(frozen=True)
class Profile:
    """The sizes of one form of the run: the models (tiny-model options), steps, batches."""

    models: dict  # name -> tiny-model options
    vocab_size: int
    pretrain_steps: int
    pretrain_batch: int
    albert_steps: int
    lr: float
    classify_steps: int
    classify_batch: int  # the grids' batch (bf16 rows)
    fp32_batch: int
    classify_lr: float
    resume_steps: int
    resume_every: int
    skip_steps: int  # steps left out of tokens/s (warm-up)
    packed_batch: int  # 512-token blocks a step (the paper configs' packed runs: 16)
    packed_length: int
    chid_batch: int  # ChID's grid batch (paper-zh: 8, 16; 8 is its longest job), ten candidates an example
    chid_steps: int


PROFILES = {
    "cuda": Profile(
        models={
            "bert-base": ["--architecture", "bert-base-uncased", "--max-length", "512"],
            "bert-large": ["--architecture", "bert-large-uncased", "--max-length", "512"],
            "electra-base": ["--architecture", "electra-base-discriminator"],
            "albert-xxlarge": ["--architecture", "albert-xxlarge-v2", "--max-length", "512"],
            "wwm-ext": ["--architecture", "chinese-bert-wwm-ext", "--max-length", "512"],  # Chinese vocabulary
        },
        vocab_size=4000,
        pretrain_steps=20,
        pretrain_batch=64,  # the ULR runs' batch (paper-en.yaml ulr*)
        albert_steps=8,  # 4 timed after the warm-up: ALBERT-xxlarge's steps are the run's dearest
        lr=1e-4,
        classify_steps=20,
        classify_batch=32,  # GLUE's grid (8-64): the batch at which paper-en's BERT-large fuses 6
        fp32_batch=8,
        classify_lr=1e-4,
        resume_steps=30,
        resume_every=10,
        skip_steps=4,
        packed_batch=16,
        packed_length=512,
        chid_batch=8,
        chid_steps=10,
    ),
    "cpu": Profile(  # tiny_hub's base / large / xxlarge proportions (pipeline/rehearsal/tiny_hub.py)
        models={
            "bert-base": ["--hidden", "32", "--layers", "2", "--heads", "2"],
            "bert-large": ["--hidden", "48", "--layers", "4", "--heads", "4"],
            "electra-base": ["--family", "electra", "--hidden", "32", "--layers", "2", "--heads", "2"],
            "albert-xxlarge": ["--family", "albert", "--hidden", "64", "--layers", "3", "--heads", "1"]
            + ["--embedding-size", "16"],
            "wwm-ext": ["--hidden", "64", "--layers", "2", "--heads", "2", "--max-length", "256"],
        },
        vocab_size=1000,
        pretrain_steps=8,
        pretrain_batch=16,
        albert_steps=8,
        lr=1e-3,
        classify_steps=6,
        classify_batch=8,
        fp32_batch=8,
        classify_lr=3e-3,
        resume_steps=8,
        resume_every=2,
        skip_steps=2,
        packed_batch=4,
        packed_length=128,  # the tiny models' positions
        chid_batch=2,
        chid_steps=6,
    ),
}


@dataclass(frozen=True)
class Pair:
    """A fused pair (pipeline/acceptance/verdicts.py ``fused_verdict``): K solo runs of ``task`` and one stack of
    the same K seeds; ``shape``: the acceptance.yaml ``finetune_mfu`` key its MFU is measured for."""

    group: str
    backbone: str
    k: int
    batch: int
    bf16: bool
    task: str = "sst2"
    length: int = 128
    candidates: int = 1  # sequences an example: a multiple-choice example one per candidate
    shape: str = ""
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or f"{self.backbone} K={self.k}"

    def steps(self, p: Profile) -> int:
        return p.chid_steps if self.task == "chid" else p.classify_steps


def fused_batches(device: str, quick: bool, large_k: int, chid_k: int) -> list[list[Pair]]:
    """The fused pairs, by the process they share: float32 (TF32 off) apart from bf16. The grids' shapes (issue
    53 §3): GLUE at 128 tokens, batch 32, K = 16 on BERT-base (and BERT-large at its K), and ChID at 256 on the
    wwm-ext shape at its grid's batch 8 (ten candidates an example) and the K the plan allows there, bf16 on
    CUDA; on CPU the ChID pair runs in float32 at tiny sizes, the bf16 rows n/a."""
    p = PROFILES[device]
    fp32 = [Pair("fused fp32", "bert-base", FP32_K, p.fp32_batch, False)]
    chid = Pair("fused chid", "wwm-ext", chid_k, p.chid_batch, device == "cuda", "chid", 256, jobs.CHID_CANDIDATES)
    chid = [] if quick else [replace(chid, shape="multiple-choice", name=CHID_ROW)]
    if device != "cuda":
        return [fp32 + chid]
    bf16 = [
        Pair("fused bf16", b, k, p.classify_batch, True, shape="sentence" if b == "bert-base" else "")
        for b, k in bf16_pairs(device, quick, large_k)
    ]
    return [fp32, bf16 + chid]


def chid_k(device: str, model: Path) -> int:
    """The ChID stack: the plan's K at its batch x 10 candidates x 256 on CUDA (BERT-base shape: 5), 4 on CPU."""
    p = PROFILES[device]
    return estimates.largest_k(model, p.chid_batch * jobs.CHID_CANDIDATES, 256) if device == "cuda" else FP32_K


@dataclass(frozen=True)
class Launch:
    """One process batch the run starts (pipeline/acceptance/jobs.py ``run_jobs`` / ``run_job``), as
    pipeline/acceptance/run_time.py counts its time: the OS processes (a torchrun launcher and each of its ranks
    count: each imports torch), the stage runs in them (each loads and saves a model), and what they train, one
    ``(backbone, sequences a step, tokens a sequence, member-steps, float32)`` per kind of step."""

    group: str
    processes: int
    jobs: int
    work: tuple = ()


def pretrain_runs(quick: bool) -> list[tuple[str, str]]:
    """(backbone, label) of every pre-training job: the objectives', then the shapes' (:data:`SHAPE_RUNS`)."""
    return QUICK_PRETRAIN + QUICK_SHAPE_RUNS if quick else PRETRAIN_RUNS + SHAPE_RUNS


def pretrain_shape(device: str, label: str) -> tuple[int, int]:
    """(sequences a step, tokens a sequence) of a pre-training job: packed blocks, or sentences at 128."""
    p = PROFILES[device]
    return (p.packed_batch, p.packed_length) if label.endswith(".packed") else (p.pretrain_batch, 128)


def pretrain_steps(device: str, backbone: str) -> int:
    p = PROFILES[device]
    return p.albert_steps if backbone == "albert-xxlarge" else p.pretrain_steps


def model_names(device: str, quick: bool) -> list[str]:
    """The models the run builds (tiny-model), in order."""
    return [name for name in PROFILES[device].models if not (quick and name in QUICK_LEAVES_OUT)]


def bf16_pairs(device: str, quick: bool, large_k: int) -> list[tuple[str, int]]:
    """(backbone, K) of the fused bf16 pairs: the grids' shape, on CUDA only (bf16 autocast is the GPU's path)."""
    if device != "cuda":
        return []
    return [("bert-base", BASE_K)] + ([] if quick else [("bert-large", large_k)])


def memory_shapes(quick: bool, large_k: int) -> list[tuple[str, int]]:
    """(backbone, K) of the stacks whose peak is measured at the papers' fine-tuning dropout."""
    return [("bert-base", BASE_K)] + ([] if quick else [("bert-large", large_k)])


def launches(device: str, quick: bool, large_k: int, chid_k: int) -> list[Launch]:
    """Every process batch :meth:`Acceptance.run_rows` starts, in order: what run_time.py's estimate counts
    (tests/test_gpu_acceptance.py runs the rows with counting stand-ins for the jobs and checks the two agree)."""
    p = PROFILES[device]
    bf16, found = device == "cuda", []
    batches = fused_batches(device, quick, large_k, chid_k)
    shapes = memory_shapes(quick, large_k)  # the memory jobs share the last batch's process
    for n, batch in enumerate(batches):
        work = tuple(
            (pair.backbone, pair.batch * pair.candidates, pair.length, 2 * pair.k * pair.steps(p), not pair.bf16)
            for pair in batch
        )
        memory = tuple((b, p.classify_batch, 128, k * MEMORY_STEPS, not bf16) for b, k in shapes)
        last = n == len(batches) - 1
        found.append(Launch(batch[0].group, 1, 2 * len(batch) + (len(shapes) if last else 0), work + memory * last))
    runs = pretrain_runs(quick)
    extra = 1 + estimates.misad_extra_passes()  # MiSAD's w and R beside S (workloads.yaml)
    work = tuple(
        (b, pretrain_shape(device, label)[0] * (extra if label.startswith("misad") else 1))
        + (pretrain_shape(device, label)[1], pretrain_steps(device, b), False)
        for b, label in runs
    )
    ddp = (("bert-base", p.pretrain_batch, 128, DDP_STEPS, False),)
    found.append(Launch("pretrain", 1, len(runs) + 1, work + ddp))  # and DDP's one-process job
    found.append(Launch("ddp", 1 + 2, 2, ddp))  # torchrun and its 2 ranks
    if not quick:
        resume = (("bert-base", p.fp32_batch, 128, RESUME_K * p.resume_steps, not bf16),)
        found += [Launch("resume", 1, 1, resume), Launch("resume", 1, 1), Launch("resume", 1, 1, resume)]
        found.append(Launch("torchrun", 1 + 1, 1, (("bert-base", p.pretrain_batch, 128, p.pretrain_steps, False),)))
    return found


def expected_rows(large_k: int, quick: bool = False) -> list[tuple[str, str]]:
    """Every row the table must have (group, row): a run that lacks one fails, so the CPU form in CI proves that
    every path still runs."""
    pretrain = [f"{backbone}+{label}" for backbone, label in pretrain_runs(quick)]
    bf16 = [("bert-base", BASE_K)] + ([] if quick else [("bert-large", large_k)])
    rows = [("pretrain", name) for name in pretrain]
    rows += [("fused fp32", f"bert-base K={FP32_K}")] + [("fused bf16", f"{b} K={k}") for b, k in bf16]
    rows += [] if quick else [("fused chid", CHID_ROW)]
    rows += [("memory", name) for name in pretrain] + [("memory", f"{b} K={k} dropout 0.1") for b, k in bf16]
    rows += [("floor", FLOOR_ROW), ("ddp", "2 processes = 1 process")]
    if not quick:
        rows += [("resume", f"fused K={RESUME_K} killed + rerun"), ("torchrun", "pretrain rule, 1 process")]
    return rows
