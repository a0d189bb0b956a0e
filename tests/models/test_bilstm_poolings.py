"""Each pooling of paper 004: output shape, its equation on a hand-sized example, gradient flow."""

from __future__ import annotations

import pytest
import torch

from pipeline.bilstm.nli_model import NLIClassifier, pair_features
from pipeline.models.bilstm.encoder import BILSTM_POOLINGS, BiLSTMEncoder
from pipeline.models.bilstm.pooling_bf_attention import BFAttentionPooling
from pipeline.models.bilstm.pooling_bf_balanced import BFBalancedPooling
from pipeline.models.bilstm.pooling_bf_combined import BFCombinedPooling
from pipeline.models.bilstm.pooling_inner_attention import InnerAttentionPooling
from pipeline.models.bilstm.pooling_max import MaxPooling

# two sentences, 3 time steps (the second has 2), hidden 2 per direction: h_t = [→h_t; ←h_t]
STATES = torch.tensor(
    [
        [[1.0, -2.0, 0.5, 3.0], [4.0, 0.0, -1.0, 1.0], [2.0, 5.0, 2.0, -3.0]],
        [[0.0, 1.0, -4.0, 2.0], [-1.0, -1.0, 6.0, 0.5], [99.0, 99.0, 99.0, 99.0]],
    ]
)
MASK = torch.tensor([[True, True, True], [True, True, False]])


@pytest.mark.parametrize("name", sorted(BILSTM_POOLINGS))
def test_every_pooling_gives_one_vector_of_twice_the_hidden_size(name):
    torch.manual_seed(0)
    pooling = BILSTM_POOLINGS[name](2)
    out = pooling(STATES, MASK)
    assert out.shape == (2, 4) and pooling.dim == 4
    assert torch.isfinite(out).all()
    assert out[1].abs().max() < 50  # the padded step (99s) never reaches the output


def test_max_pooling_is_the_maximum_over_valid_steps():
    out = MaxPooling(2)(STATES, MASK)
    assert out.tolist() == [[4.0, 5.0, 2.0, 3.0], [0.0, 1.0, 6.0, 2.0]]


def test_bf_combined_is_max_over_time_of_wh_plus_b():
    pooling = BFCombinedPooling(2)
    with torch.no_grad():  # eq. 3 with W = [[1,1,0,0],[0,0,1,1],[1,0,0,0],[0,0,0,-1]], b = (0, 0, 0, 1)
        pooling.combine.weight.copy_(torch.tensor([[1.0, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 0, -1]]))
        pooling.combine.bias.copy_(torch.tensor([0.0, 0, 0, 1]))
    out = pooling(STATES, MASK)
    # sentence 1: A rows (-1, 3.5, 1, -2), (4, 0, 4, 0), (7, -1, 2, 4) → max (7, 3.5, 4, 4)
    assert out[0].tolist() == [7.0, 3.5, 4.0, 4.0]
    # sentence 2: (1, -2, 0, -1), (-2, 6.5, -1, 0.5) → (1, 6.5, 0, 0.5)
    assert out[1].tolist() == [1.0, 6.5, 0.0, 0.5]


def test_bf_balanced_weights_are_the_shares_of_the_two_informations():
    pooling = BFBalancedPooling(2)
    with torch.no_grad():  # W = identity: I = exp(h) per dimension
        pooling.information.weight.copy_(torch.eye(2))
    forward, backward = torch.tensor([[1.0, -2.0]]), torch.tensor([[0.5, 3.0]])
    w0, w1 = pooling.weights(forward, backward)
    information_f, information_b = forward.exp(), backward.exp()
    assert torch.allclose(w0, information_f / (information_f + information_b))
    assert torch.allclose(w1, information_b / (information_f + information_b))
    # eq. 2 on sentence 1 by hand: max over t of [2·w0·→h_t ; 2·w1·←h_t]
    f, b = STATES[0, :, :2], STATES[0, :, 2:]
    share = f.exp() / (f.exp() + b.exp())
    expected = torch.cat([2 * share * f, 2 * (1 - share) * b], dim=-1).amax(0)
    assert torch.allclose(pooling(STATES, MASK)[0], expected)


def test_bf_balanced_with_equal_directions_is_max_pooling():
    """→h_t = ←h_t: both shares are 1/2, and the factor 2 gives plain BiLSTM-max (paper 004 eq. 2)."""
    torch.manual_seed(1)
    half = torch.randn(3, 5, 4)
    states = torch.cat([half, half], dim=-1)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1, 3:] = False
    pooling = BFBalancedPooling(4)
    w0, w1 = pooling.weights(half, half)
    assert torch.allclose(w0, torch.full_like(w0, 0.5)) and torch.allclose(w1, torch.full_like(w1, 0.5))
    assert torch.allclose(pooling(states, mask), MaxPooling(4)(states, mask))


def test_bf_attention_is_the_attention_weighted_sum_of_the_combined_states():
    torch.manual_seed(2)
    pooling = BFAttentionPooling(2)
    combined = pooling.combine(STATES)
    scores = pooling.context(torch.tanh(pooling.project(combined))).squeeze(-1)
    weights = torch.softmax(scores[1, :2], dim=0)
    expected = weights[0] * combined[1, 0] + weights[1] * combined[1, 1]
    out = pooling(STATES, MASK)
    assert torch.allclose(out[1], expected, atol=1e-6)
    attention = pooling.attention(combined, MASK)
    assert torch.allclose(attention.sum(1), torch.ones(2)) and attention[1, 2] == 0


def test_inner_attention_attends_with_the_mean_state():
    torch.manual_seed(3)
    pooling = InnerAttentionPooling(2)
    y = STATES[1, :2]
    memory = torch.tanh(pooling.states(y) + pooling.average(y.mean(0)))
    alpha = torch.softmax(pooling.score(memory).squeeze(-1), dim=0)
    assert torch.allclose(pooling(STATES, MASK)[1], alpha @ y, atol=1e-6)


def test_pair_features_are_u_v_absolute_difference_and_product():
    u, v = torch.tensor([[1.0, -2.0]]), torch.tensor([[3.0, 1.0]])
    assert pair_features(u, v).tolist() == [[1.0, -2.0, 3.0, 1.0, 2.0, 3.0, 3.0, -2.0]]


@pytest.mark.parametrize("name", sorted(BILSTM_POOLINGS))
def test_gradient_flows_through_every_parameter(name):
    torch.manual_seed(4)
    model = NLIClassifier(BiLSTMEncoder(torch.randn(10, 6), hidden=3, pooling=name), hidden=5)
    logits = model([[1, 2, 3], [4], []], [[5, 6], [7, 8, 9, 1], [2]])
    torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 2])).backward()
    trainable = dict(model.named_parameters())
    assert not trainable["encoder.embedding.weight"].requires_grad  # the word vectors stay frozen
    for parameter_name, parameter in trainable.items():
        if parameter.requires_grad:
            assert parameter.grad is not None and parameter.grad.abs().sum() > 0, parameter_name
