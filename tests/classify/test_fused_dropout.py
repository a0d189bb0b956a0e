"""A fused member's dropout masks (pipeline/classify/fused_dropout.py): the rate asked for, a member's own,
independent of the padding its stack adds, and torch's dropout under the mode only while it is on."""

from __future__ import annotations

import torch

from pipeline.classify.fused_dropout import MAX_CALLS, MemberDropout, call_keys, keep_mask, member_key


def test_a_mask_keeps_one_minus_the_rate_and_differs_by_member_step_and_call():
    keys = call_keys(torch.tensor([member_key("m", 0, "s"), member_key("m", 1, "s")]), 0)
    assert keys.shape == (2, MAX_CALLS)
    shape = torch.Size([16, 12, 64, 64])
    first = keep_mask(keys[0, 0], shape, 0.1, "cpu")
    assert abs(first.float().mean().item() - 0.9) < 0.002  # 786,432 draws: the standard error is 0.0003
    for other in (keys[1, 0], keys[0, 1], call_keys(torch.tensor([member_key("m", 0, "s")]), 1)[0, 0]):
        agree = (keep_mask(other, shape, 0.1, "cpu") == first).float().mean().item()
        assert abs(agree - (0.9**2 + 0.1**2)) < 0.002  # independent masks agree as often as chance says
    # neighbours along every axis are not correlated either
    for axis in range(4):
        a, b = first.narrow(axis, 0, shape[axis] - 1), first.narrow(axis, 1, shape[axis] - 1)
        assert abs((a == b).float().mean().item() - 0.82) < 0.003, axis


def test_a_tokens_mask_does_not_depend_on_the_padding():
    """A stack pads the token axis to its longest member's: the real tokens keep their masks."""
    key = call_keys(torch.tensor([7]), 3)[0, 5]
    short = keep_mask(key, torch.Size([4, 2, 10, 10]), 0.3, "cpu")
    padded = keep_mask(key, torch.Size([4, 2, 17, 17]), 0.3, "cpu")
    assert torch.equal(short, padded[:, :, :10, :10])
    hidden = keep_mask(key, torch.Size([4, 10, 32]), 0.3, "cpu")
    assert torch.equal(hidden, keep_mask(key, torch.Size([4, 25, 32]), 0.3, "cpu")[:, :10])


def test_the_mode_replaces_torchs_dropout_in_training_only():
    keys = call_keys(torch.tensor([1]), 0)[0]
    x = torch.ones(8, 100)
    with MemberDropout(keys) as mode:
        dropped = torch.nn.Dropout(0.5)(x)
        again = torch.nn.functional.dropout(x, 0.5, training=True)
        assert torch.equal(torch.nn.functional.dropout(x, 0.5, training=False), x)
        assert mode.calls == 2
    assert set(dropped.unique().tolist()) == {0.0, 2.0}  # kept elements scaled by 1 / (1 - p)
    assert torch.equal(dropped, keep_mask(keys[0], x.shape, 0.5, "cpu") * 2.0)
    assert not torch.equal(dropped, again)  # the second call draws its own mask
