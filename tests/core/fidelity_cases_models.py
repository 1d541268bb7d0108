"""Model-code snippets for the fidelity suites: real layers, losses, optimizers and torch
features that CASES (fidelity_cases.py, fidelity_cases_more.py) does not reach.

Each is small and seeded; each is run under the tracer and directly under torch (see
test_fidelity.py and test_event_fidelity.py). A comment above a case says what it
once caught, in the recorder or in the event check's own reference.
"""

from __future__ import annotations

MODEL_CASES: dict[str, str] = {
    # ---------------------------------------------------------------- embeddings
    "embedding_padding_idx_adam": """
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(6, 3, padding_idx=0)
ids = torch.tensor([[0, 2, 5], [3, 0, 0]])
opt = torch.optim.Adam(emb.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    vectors = emb(ids)
    loss = (vectors.sum(dim=1) ** 2).mean()
    loss.backward()
    opt.step()
""",
    "embedding_bag_modes_and_weights": """
import torch
from torch import nn
torch.manual_seed(0)
bag_sum = nn.EmbeddingBag(8, 3, mode="sum")
bag_mean = nn.EmbeddingBag(8, 3, mode="mean", padding_idx=1)
bag_max = nn.EmbeddingBag(8, 3, mode="max")
flat = torch.tensor([1, 2, 4, 5, 4, 3, 2, 7])
offsets = torch.tensor([0, 3, 5])
weights = torch.rand(8, requires_grad=True)
a = bag_sum(flat, offsets, per_sample_weights=weights)
b = bag_mean(torch.tensor([[1, 2, 3], [1, 1, 6]]))
c = bag_max(flat, offsets)
loss = a.pow(2).sum() + b.sum() + c.sum()
loss.backward()
""",
    "embedding_max_norm_renorm": """
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(5, 4, max_norm=1.0)
with torch.no_grad():
    emb.weight.mul_(3)
ids = torch.tensor([1, 3, 3])
out = emb(ids)
loss = (out * torch.arange(4.0)).sum()
loss.backward()
""",
    "weight_tying_embedding_and_head": """
import torch
from torch import nn
torch.manual_seed(0)
class TiedLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.emb.weight
    def forward(self, ids):
        return self.head(torch.tanh(self.emb(ids)))
model = TiedLM(7, 4)
ids = torch.tensor([[1, 4, 2], [6, 0, 3]])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    logits = model(ids[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 7), ids[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
""",
    # ---------------------------------------------------------------- init and no_grad writes
    "init_orthogonal_kaiming_xavier": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
nn.init.orthogonal_(model[0].weight)
nn.init.kaiming_uniform_(model[2].weight, nonlinearity="relu")
nn.init.xavier_normal_(model[4].weight, gain=nn.init.calculate_gain("tanh"))
nn.init.zeros_(model[0].bias)
nn.init.constant_(model[2].bias, 0.1)
nn.init.trunc_normal_(model[4].bias, std=0.02)
X = torch.randn(5, 4)
loss = model(X).pow(2).mean()
loss.backward()
""",
    "model_apply_init_fn": """
import torch
from torch import nn
torch.manual_seed(0)
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, mean=0.0, std=0.5)
        nn.init.uniform_(m.bias, -0.1, 0.1)
model = nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.Linear(5, 2))
model.apply(init_weights)
X = torch.randn(4, 3)
loss = model(X).logsumexp(dim=1).mean()
loss.backward()
""",
    "nograd_inplace_on_parameter_views": """
import torch
torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
with torch.no_grad():
    w[0].fill_(1.0)
    w[:, 1].mul_(2)
    w.diagonal().zero_()
x = torch.randn(4)
loss = (w @ x).pow(2).sum()
loss.backward()
""",
    "nograd_inplace_on_module_weight_rows": """
import torch
from torch import nn
torch.manual_seed(0)
lin = nn.Linear(3, 3)
with torch.no_grad():
    lin.weight[:, 0] = 0.0
    lin.bias[1:].copy_(torch.tensor([0.5, -0.5]))
X = torch.randn(4, 3)
loss = lin(X).sum()
loss.backward()
""",
    # ---------------------------------------------------------------- attention and transformers
    "transformer_encoder_layer_masks": """
import torch
from torch import nn
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(
    d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True
)
src = torch.randn(2, 4, 8)
causal = nn.Transformer.generate_square_subsequent_mask(4)
padding = torch.tensor([[False, False, False, True], [False, False, False, False]])
out = layer(src, src_mask=causal, src_key_padding_mask=padding)
loss = out[:, :3].pow(2).mean()
loss.backward()
""",
    "transformer_decoder_layer_norm_first": """
import torch
from torch import nn
torch.manual_seed(0)
layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=12, dropout=0.0,
                                   batch_first=True, norm_first=True, activation="gelu")
tgt = torch.randn(2, 3, 8)
memory = torch.randn(2, 5, 8, requires_grad=True)
tgt_mask = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
out = layer(tgt, memory, tgt_mask=tgt_mask)
loss = out.sum() / 10
loss.backward()
""",
    "multihead_attention_key_padding": """
import torch
from torch import nn
torch.manual_seed(0)
mha = nn.MultiheadAttention(embed_dim=6, num_heads=2, batch_first=True)
q = torch.randn(2, 3, 6, requires_grad=True)
kv = torch.randn(2, 4, 6)
pad = torch.tensor([[False, False, True, True], [False, False, False, True]])
out, weights = mha(q, kv, kv, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
loss = out.pow(2).sum() + weights[:, 0].max(dim=-1).values.sum()
loss.backward()
""",
    "sdpa_causal_and_bool_mask": """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
q = torch.randn(1, 2, 4, 3, requires_grad=True)
k = torch.randn(1, 2, 4, 3, requires_grad=True)
v = torch.randn(1, 2, 4, 3, requires_grad=True)
causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
mask = torch.tensor([[True, True, False, True]]).expand(4, 4)
masked = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.5)
loss = causal.pow(2).sum() + masked.mean()
loss.backward()
""",
    "tiny_transformer_lm_training_step": """
import torch
from torch import nn
torch.manual_seed(0)
class TinyLM(nn.Module):
    def __init__(self, vocab=11, dim=8, ctx=5):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(ctx, dim))
        layer = nn.TransformerEncoderLayer(dim, 2, 16, dropout=0.0, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
    def forward(self, ids):
        n = ids.shape[1]
        h = self.tok(ids) + self.pos[:n]
        mask = nn.Transformer.generate_square_subsequent_mask(n)
        h = self.blocks(h, mask=mask, is_causal=True)
        return self.head(self.norm(h))
model = TinyLM()
data = torch.randint(0, 11, (3, 6))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
for step in range(2):
    opt.zero_grad(set_to_none=True)
    logits = model(data[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 11), data[:, 1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
""",
    # ---------------------------------------------------------------- recurrent
    "gru_pack_padded_sequence": """
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
torch.manual_seed(0)
gru = nn.GRU(input_size=3, hidden_size=4, batch_first=True)
seqs = torch.randn(3, 4, 3)
lengths = torch.tensor([4, 2, 1])
packed = pack_padded_sequence(seqs, lengths, batch_first=True)
out_packed, h_n = gru(packed)
out, out_lengths = pad_packed_sequence(out_packed, batch_first=True)
loss = out.sum() + h_n.pow(2).sum()
loss.backward()
""",
    "lstm_bidirectional_two_layers_unsorted_pack": """
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
torch.manual_seed(0)
lstm = nn.LSTM(input_size=2, hidden_size=3, num_layers=2, bidirectional=True)
seqs = torch.randn(4, 3, 2)
lengths = torch.tensor([2, 4, 3])
packed = pack_padded_sequence(seqs, lengths, enforce_sorted=False)
out_packed, (h_n, c_n) = lstm(packed)
out, _ = pad_packed_sequence(out_packed, total_length=4)
loss = out.abs().sum() + h_n[-2:].sum() + c_n.mean()
loss.backward()
""",
    "rnn_cell_loop_bptt_sgd": """
import torch
from torch import nn
torch.manual_seed(0)
cell = nn.RNNCell(2, 3, nonlinearity="tanh")
readout = nn.Linear(3, 1)
xs = torch.randn(5, 4, 2)
ys = torch.randn(5, 4, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(readout.parameters()), lr=0.05, momentum=0.9)
for epoch in range(2):
    opt.zero_grad()
    h = torch.zeros(4, 3)
    loss = 0
    for x_t, y_t in zip(xs, ys):
        h = cell(x_t, h)
        loss = loss + nn.functional.mse_loss(readout(h), y_t)
    loss.backward()
    opt.step()
""",
    # ---------------------------------------------------------------- convolution and pooling
    "conv1d_avgpool_adaptive": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv1d(2, 4, kernel_size=3, padding=1, dilation=1),
    nn.SiLU(),
    nn.AvgPool1d(2),
    nn.Conv1d(4, 4, kernel_size=3, groups=2, stride=2, padding="valid"),
    nn.AdaptiveAvgPool1d(1),
    nn.Flatten(),
)
X = torch.randn(3, 2, 12)
loss = model(X).pow(2).mean()
loss.backward()
""",
    "convtranspose2d_interpolate_adaptivemax": """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
up = nn.ConvTranspose2d(3, 2, kernel_size=2, stride=2)
conv = nn.Conv2d(2, 2, kernel_size=3, padding=1, padding_mode="reflect", bias=False)
x = torch.randn(1, 3, 3, 3, requires_grad=True)
h = up(x)
h = F.interpolate(h, scale_factor=1.5, mode="bilinear", align_corners=False)
h = conv(h)
pooled = F.adaptive_max_pool2d(h, (2, 2))
avg = F.avg_pool2d(h, kernel_size=3, stride=2, ceil_mode=True, count_include_pad=False)
loss = pooled.sum() + avg.pow(2).sum()
loss.backward()
""",
    "maxpool_return_indices_unpool": """
import torch
from torch import nn
torch.manual_seed(0)
pool = nn.MaxPool2d(2, return_indices=True)
unpool = nn.MaxUnpool2d(2)
x = torch.randn(1, 2, 4, 4, requires_grad=True)
y, idx = pool(x)
z = unpool(y * 2, idx)
loss = (z * torch.arange(16.0).reshape(4, 4)).sum()
loss.backward()
""",
    "unfold_fold_pixel_shuffle": """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
img = torch.randn(1, 4, 4, 4, requires_grad=True)
patches = F.unfold(img, kernel_size=2, stride=2)
back = F.fold(patches * 0.5, output_size=(4, 4), kernel_size=2, stride=2)
shuffled = F.pixel_shuffle(img, 2)
unshuffled = F.pixel_unshuffle(shuffled, 2)
loss = back.sum() + (shuffled ** 2).mean() + (unshuffled - img).abs().sum()
loss.backward()
""",
    "residual_block_batchnorm_sgd": """
import torch
from torch import nn
torch.manual_seed(0)
class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + x)
net = nn.Sequential(
    nn.Conv2d(1, 2, 1), BasicBlock(2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 2)
)
X = torch.randn(3, 1, 5, 5)
y = torch.tensor([0, 1, 1])
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for _ in range(2):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(X), y)
    loss.backward()
    opt.step()
""",
    # ---------------------------------------------------------------- normalisation, dropout
    "batchnorm_train_then_eval": """
import torch
from torch import nn
torch.manual_seed(0)
bn = nn.BatchNorm1d(3, momentum=0.5)
lin = nn.Linear(3, 1)
X = torch.randn(6, 3) * 2 + 1
bn.train()
loss_train = lin(bn(X)).pow(2).mean()
loss_train.backward()
running = bn.running_mean.clone()
bn.eval()
loss_eval = lin(bn(X[:2])).sum()
loss_eval.backward()
""",
    "layernorm_groupnorm_rmsnorm": """
import torch
from torch import nn
torch.manual_seed(0)
ln = nn.LayerNorm(6)
gn = nn.GroupNorm(2, 4)
rms = nn.RMSNorm(6, eps=1e-6)
inorm = nn.InstanceNorm1d(4, affine=True)
x = torch.randn(2, 4, 6, requires_grad=True)
a = ln(x)
b = gn(x)
c = rms(x)
d = inorm(x)
f = torch.nn.functional.layer_norm(x, (6,), eps=1e-3)
loss = (a * b).sum() + c.pow(2).mean() + d.sum() * 0.1 + f.max()
loss.backward()
""",
    "dropout_train_and_eval_seeded": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(p=0.5), nn.Linear(8, 1))
X = torch.randn(5, 4)
model.train()
train_out = model(X)
extra = torch.nn.functional.dropout(X, p=0.3, training=True)
alpha = nn.AlphaDropout(0.2)(X)
loss = train_out.sum() + extra.sum() + alpha.mean()
loss.backward()
model.eval()
eval_out = model(X)
""",
    # ---------------------------------------------------------------- modules and containers
    "parameterlist_moduledict_buffer": """
import torch
from torch import nn
torch.manual_seed(0)
class Mixture(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(3) * (i + 1)) for i in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.Linear(3, 2)})
        self.register_buffer("center", torch.tensor([0.5, -0.5, 0.0]))
        self.register_buffer("calls", torch.zeros(()), persistent=False)
    def forward(self, x):
        self.calls += 1
        h = sum(s * (x - self.center) for s in self.scales)
        return self.heads["a"](h) * self.heads["b"](h).sigmoid()
model = Mixture()
X = torch.randn(4, 3)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for _ in range(2):
    opt.zero_grad()
    loss = model(X).pow(2).sum()
    loss.backward()
    opt.step()
""",
    "module_forward_and_full_backward_hooks": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
seen = []
def forward_hook(module, inputs, output):
    return output * 2
def backward_hook(module, grad_input, grad_output):
    seen.append(grad_output[0].detach().clone())
    return (grad_input[0] * 0.5,)
def backward_pre_hook(module, grad_output):
    return (grad_output[0].clamp(-0.2, 0.2),)
model[0].register_forward_hook(forward_hook)
model[1].register_full_backward_hook(backward_hook)
model[2].register_full_backward_pre_hook(backward_pre_hook)
X = torch.randn(5, 3, requires_grad=True)
loss = model(X).sum()
loss.backward()
""",
    "parametrize_orthogonal_and_symmetric": """
import torch
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import orthogonal
torch.manual_seed(0)
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)
sym = nn.Linear(3, 3)
parametrize.register_parametrization(sym, "weight", Symmetric())
orth = orthogonal(nn.Linear(3, 3))
X = torch.randn(4, 3)
opt = torch.optim.SGD(list(sym.parameters()) + list(orth.parameters()), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    loss = orth(sym(X)).pow(2).sum()
    loss.backward()
    opt.step()
""",
    "parameters_to_vector_and_back": """
import torch
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters
torch.manual_seed(0)
model = nn.Linear(3, 2)
flat = parameters_to_vector(model.parameters())
loss = model(torch.randn(4, 3)).pow(2).sum() + flat.pow(2).sum()
loss.backward()
grad_vec = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
vector_to_parameters(flat.detach() - 0.1 * grad_vec, model.parameters())
loss2 = model(torch.ones(1, 3)).sum()
loss2.backward()
""",
    "ema_averaged_model": """
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
torch.manual_seed(0)
model = nn.Linear(3, 1)
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    ema.update_parameters(model)
with torch.no_grad():
    ema_pred = ema(X)
""",
    "activations_zoo": """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.linspace(-3, 3, 9, requires_grad=True)
prelu = nn.PReLU(num_parameters=1, init=0.2)
acts = [F.gelu(x, approximate="tanh"), F.silu(x), F.mish(x), F.softplus(x, beta=2),
        F.hardswish(x), F.elu(x), F.selu(x), F.leaky_relu(x, 0.1), F.hardtanh(x),
        F.logsigmoid(x), F.relu6(x), prelu(x), F.celu(x), F.softsign(x), F.glu(x[:8])]
loss = sum(a.sum() for a in acts)
loss.backward()
""",
    # ---------------------------------------------------------------- tensor ops
    "cumsum_topk_sort_masked_fill": """
import torch
torch.manual_seed(0)
x = torch.randn(3, 5, requires_grad=True)
csum = x.cumsum(dim=1)
cprod = x.cumprod(dim=0)
top_vals, top_idx = x.topk(2, dim=1)
sorted_vals, order = x.sort(dim=1, descending=True)
masked = x.masked_fill(x < 0, 0.0)
kth = x.kthvalue(2, dim=1).values
amax = torch.amax(x, dim=0)
lse = torch.logsumexp(x, dim=1)
cm = torch.cummax(x, dim=1).values
loss = (csum.sum() + cprod.sum() + top_vals.sum() + (sorted_vals * torch.arange(5.0)).sum()
        + masked.sum() + kth.sum() + amax.sum() + lse.sum() + cm.sum())
loss.backward()
""",
    "scatter_inplace_index_put_take_along": """
import torch
torch.manual_seed(0)
src = torch.randn(2, 3, requires_grad=True)
base = torch.zeros(2, 4, requires_grad=True)
out = base.clone()
out.scatter_(1, torch.tensor([[0, 2, 3], [1, 0, 2]]), src)
out.index_put_((torch.tensor([0, 1]), torch.tensor([1, 3])), src[:, 0] * 10, accumulate=True)
picked = torch.take_along_dim(out, torch.tensor([[3], [0]]), dim=1)
filled = out.masked_scatter(out > 0, torch.arange(8.0))
slots = torch.tensor([0, 1, 0, 2, 1, 1])
red = torch.zeros(3).scatter_reduce(0, slots, src.reshape(-1), reduce="amax", include_self=False)
loss = out.pow(2).sum() + picked.sum() + filled.sum() + red.sum()
loss.backward()
""",
    "einsum_bmm_baddbmm_outer": """
import torch
torch.manual_seed(0)
A = torch.randn(2, 3, 4, requires_grad=True)
B = torch.randn(2, 4, 2, requires_grad=True)
C = torch.randn(2, 3, 2, requires_grad=True)
u = torch.randn(3, requires_grad=True)
bil = torch.einsum("bij,bjk,i->bk", A, B, u)
full = torch.baddbmm(C, A, B, beta=0.5, alpha=2.0)
outer = torch.outer(u, u)
tr = torch.einsum("ii", outer)
kron = torch.kron(outer[:2, :2], torch.eye(2))
tens = torch.tensordot(A[0], B[0], dims=1)
loss = bil.sum() + full.pow(2).mean() + tr + kron.sum() + tens.sum()
loss.backward()
""",
    "straight_through_and_one_hot": """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.randn(4, 3, requires_grad=True)
soft = logits.softmax(dim=-1)
hard = F.one_hot(soft.argmax(dim=-1), num_classes=3).to(soft.dtype)
st = hard + soft - soft.detach()
rounded = logits + (logits.round() - logits).detach()
values = torch.tensor([1.0, 2.0, 3.0])
loss = (st * values).sum() + rounded.pow(2).sum()
loss.backward()
""",
    # ---------------------------------------------------------------- losses
    "cross_entropy_label_smoothing_ignore_index": """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.randn(2, 4, 3, requires_grad=True)
target = torch.tensor([[0, 3, -100], [2, -100, 1]])
smooth = F.cross_entropy(logits, target, label_smoothing=0.1, ignore_index=-100)
class_weight = torch.tensor([1.0, 2.0, 0.5, 1.0])
first = logits[:, :, 0]
weighted = F.cross_entropy(first, torch.tensor([1, 2]), weight=class_weight, reduction="sum")
probs_target = torch.softmax(torch.randn(2, 4), dim=1)
soft_target = F.cross_entropy(logits[:, :, 1], probs_target)
loss = smooth + weighted + soft_target
loss.backward()
""",
    "nll_bce_pos_weight_kl_huber": """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(4, 3, requires_grad=True)
nll_weight = torch.tensor([0.2, 1.0, 2.0])
nll = F.nll_loss(F.log_softmax(x, dim=1), torch.tensor([0, 2, 1, 2]), weight=nll_weight)
bce_targets = (torch.rand(4, 3) > 0.5).float()
bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 3.0, 0.5]))(x, bce_targets)
kl = F.kl_div(F.log_softmax(x, dim=1), F.softmax(torch.randn(4, 3), dim=1), reduction="batchmean")
log_target = F.log_softmax(x.detach() * 2, 1)
kl_log = F.kl_div(F.log_softmax(x, 1), log_target, reduction="sum", log_target=True)
huber = F.huber_loss(x, torch.zeros(4, 3), delta=0.5)
smooth_l1 = F.smooth_l1_loss(x, torch.ones(4, 3), beta=0.3)
margin = F.margin_ranking_loss(x[:, 0], x[:, 1], torch.tensor([1.0, -1.0, 1.0, -1.0]), margin=0.2)
cos = F.cosine_embedding_loss(x[:2], x[2:], torch.tensor([1.0, -1.0]))
loss = nll + bce + kl + kl_log + huber + smooth_l1 + margin + cos
loss.backward()
""",
    "ctc_loss_small": """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
T, N, C = 6, 2, 4
logits = torch.randn(T, N, C, requires_grad=True)
log_probs = logits.log_softmax(2)
targets = torch.tensor([1, 2, 2, 3, 1])
input_lengths = torch.tensor([6, 5])
target_lengths = torch.tensor([3, 2])
loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=True)
loss.backward()
""",
    # ---------------------------------------------------------------- optimizers and schedules
    "adagrad_onecycle_adam": """
import torch
torch.manual_seed(0)
p = torch.randn(4, requires_grad=True)
q = torch.randn(3, requires_grad=True)
opt_p = torch.optim.Adagrad([p], lr=0.2, lr_decay=0.01, weight_decay=0.1)
opt_q = torch.optim.Adam([q], lr=0.1, amsgrad=True)
sched = torch.optim.lr_scheduler.OneCycleLR(opt_q, max_lr=0.3, total_steps=4)
for _ in range(3):
    opt_p.zero_grad()
    opt_q.zero_grad()
    loss = ((p - 1) ** 2).sum() + (q.exp() - 2).pow(2).sum()
    loss.backward()
    opt_p.step()
    opt_q.step()
    sched.step()
""",
    "param_groups_warmup_sequential_lr": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": no_decay, "weight_decay": 0.0, "lr": 0.01}], lr=0.05)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
decay_sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, decay_sched], milestones=[2])
X, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(4):
    opt.zero_grad()
    loss = nn.functional.l1_loss(model(X), y)
    loss.backward()
    opt.step()
    sched.step()
""",
    "adamax_nadam_radam_reduce_on_plateau": """
import torch
torch.manual_seed(0)
a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
c = torch.randn(3, requires_grad=True)
opts = [torch.optim.Adamax([a], lr=0.1), torch.optim.NAdam([b], lr=0.1),
        torch.optim.RAdam([c], lr=0.1)]
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opts[0], factor=0.5, patience=0)
for _ in range(3):
    for o in opts:
        o.zero_grad()
    loss = (a ** 2).sum() + (b - 1).abs().sum() + (c * a.detach()).sum()
    loss.backward()
    for o in opts:
        o.step()
    plateau.step(loss.item())
""",
    "lbfgs_strong_wolfe_model": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
X = torch.randn(8, 2)
y = X @ torch.tensor([[1.5], [-2.0]]) + 0.3
opt = torch.optim.LBFGS(
    model.parameters(), lr=1, max_iter=4, history_size=3, line_search_fn="strong_wolfe"
)
def closure():
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    return loss
final = opt.step(closure)
""",
    "gradient_accumulation_micro_batches": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X, y = torch.randn(8, 3), torch.randn(8, 1)
accum = 2
opt.zero_grad()
for i, (xb, yb) in enumerate(zip(X.split(2), y.split(2))):
    loss = nn.functional.mse_loss(model(xb), yb) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type=2.0, foreach=True)
        opt.step()
        opt.zero_grad()
""",
    # ---------------------------------------------------------------- custom Functions
    "custom_function_needs_input_grad_two_outputs": """
import torch
class ScaledProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        return a * b * scale, (a - b).detach()
    @staticmethod
    def backward(ctx, grad_prod, grad_diff):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = grad_prod * b * ctx.scale
        if ctx.needs_input_grad[1]:
            gb = grad_prod * a * ctx.scale
        return ga, gb, None
torch.manual_seed(0)
a = torch.randn(3, requires_grad=True)
b = torch.randn(3)
prod, diff = ScaledProduct.apply(a, b, 2.0)
loss = prod.sum() + diff.sum()
loss.backward()
""",
    "custom_function_setup_context_non_differentiable": """
import torch
class SortWithIndex(torch.autograd.Function):
    @staticmethod
    def forward(x):
        values, idx = x.sort()
        return values, idx
    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        _, idx = output
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        ctx.set_materialize_grads(False)
    @staticmethod
    def backward(ctx, grad_values, grad_idx):
        (idx,) = ctx.saved_tensors
        grad = torch.zeros_like(grad_values)
        grad.scatter_(0, idx, grad_values)
        return grad
torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)
values, idx = SortWithIndex.apply(x)
loss = (values * torch.arange(5.0)).sum()
loss.backward()
""",
    "custom_function_backward_calls_autograd_grad": """
import torch
class ViaGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.detach().sin()
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x_ = x.detach().requires_grad_()
            y = x_.sin()
            (g,) = torch.autograd.grad(y, x_, grad)
        return g
torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
loss = ViaGrad.apply(x * 2).sum()
loss.backward()
""",
    # ---------------------------------------------------------------- higher-order and functional
    "functional_hessian_vjp_jvp": """
import torch
from torch.autograd.functional import hessian, vjp, jvp, hvp
torch.manual_seed(0)
def f(x):
    return (x ** 3).sum() + x.prod()
x = torch.randn(3)
H = hessian(f, x)
out, vj = vjp(lambda t: t.exp() * 2, x, torch.ones(3))
out2, jv = jvp(lambda t: t.sin(), (x,), (torch.ones(3),))
val, hv = hvp(f, x, torch.tensor([1.0, 0.0, 0.0]))
w = torch.randn(3, requires_grad=True)
loss = (H @ w).sum() + (vj * w).sum() + (jv * w).sum() + (hv * w).sum()
loss.backward()
""",
    # The trace shows the tensor behind vmap's wrappers (batch_dims); so must the reference.
    "func_vmap_jacrev_per_sample_grads": """
import torch
from torch import nn
from torch.func import functional_call, grad, vmap, jacrev, hessian
torch.manual_seed(0)
model = nn.Linear(3, 1)
params = {k: v.detach() for k, v in model.named_parameters()}
X, y = torch.randn(4, 3), torch.randn(4, 1)
def loss_one(p, xb, yb):
    pred = functional_call(model, p, (xb.unsqueeze(0),))
    return ((pred - yb.unsqueeze(0)) ** 2).mean()
per_sample = vmap(grad(loss_one), in_dims=(None, 0, 0))(params, X, y)
J = vmap(jacrev(torch.sin))(X)
Hs = hessian(lambda t: (t ** 4).sum())(X[0])
w = torch.randn(3, requires_grad=True)
loss = (per_sample["weight"].sum(0) @ w.unsqueeze(1)).sum() + (J.sum(0) @ w).sum() + (Hs @ w).sum()
loss.backward()
""",
    "double_backward_create_graph_backward": """
import torch
from torch import nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(2, 3), nn.Softplus(), nn.Linear(3, 1))
x = torch.randn(4, 2, requires_grad=True)
out = net(x).sum()
out.backward(create_graph=True)
grad_norm = sum((p.grad ** 2).sum() for p in net.parameters())
net.zero_grad(set_to_none=True)
x.grad = None
grad_norm.backward()
""",
    "retain_graph_two_roots_then_step": """
import torch
from torch import nn
torch.manual_seed(0)
enc = nn.Linear(3, 4)
head_a = nn.Linear(4, 1)
head_b = nn.Linear(4, 2)
params = [*enc.parameters(), *head_a.parameters(), *head_b.parameters()]
opt = torch.optim.SGD(params, lr=0.1)
X = torch.randn(5, 3)
z = torch.relu(enc(X))
loss_a = head_a(z).pow(2).mean()
loss_b = head_b(z).abs().mean()
opt.zero_grad()
loss_a.backward(retain_graph=True)
enc_grad_a = enc.weight.grad.clone()
loss_b.backward()
opt.step()
""",
    # ---------------------------------------------------------------- hooks and grad modes
    "tensor_hook_on_leaf_and_retain_grad_chain": """
import torch
torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
h1 = w.exp()
h1.retain_grad()
h2 = h1 * h1
h2.retain_grad()
handle = h2.register_hook(lambda g: g + 1)
def halve(p):
    p.grad.mul_(0.5)
w.register_post_accumulate_grad_hook(halve)
loss = h2.sum()
loss.backward(retain_graph=True)
handle.remove()
loss.backward()
""",
    "node_post_hook_registered_by_user": """
import torch
torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
y = x * 2
z = y.sin()
z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 3,))
y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] + 1,))
loss = z.sum()
loss.backward()
""",
    "grad_mode_blocks_inference_set_enabled": """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    a = w * 2
    with torch.enable_grad():
        b = w * 3
with torch.inference_mode():
    c = torch.randn(3) * 4
with torch.set_grad_enabled(False):
    d = w + 1
torch.set_grad_enabled(True)
is_on = torch.is_grad_enabled()
e = (w + c).pow(2).sum() + b.sum()
e.backward()
""",
    "detach_inplace_and_requires_grad_toggle": """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
h = w * 2
h.detach_()
h.requires_grad_()
loss1 = (h ** 2).sum() + w.sum()
loss1.backward()
w.requires_grad_(False)
k = w * 5
w.requires_grad_(True)
loss2 = (w * k).sum()
loss2.backward()
""",
    "mixed_requires_grad_autograd_grad_allow_unused": """
import torch
torch.manual_seed(0)
a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
c = torch.randn(3)
unused = torch.randn(2, requires_grad=True)
y = (a * c).sum() + (b.detach() * a).sum()
ga, gb, gu = torch.autograd.grad(y, [a, b, unused], allow_unused=True, retain_graph=True)
ga2, gu2 = torch.autograd.grad(y, [a, unused], allow_unused=True, materialize_grads=True)
z = (a * b).sum()
z.backward(inputs=[b])
""",
    # ---------------------------------------------------------------- dtypes, complex, linalg
    "half_and_bfloat16_autograd": """
import torch
torch.manual_seed(0)
w16 = torch.randn(3, 3, dtype=torch.float16, requires_grad=True)
wbf = torch.randn(3, 3, dtype=torch.bfloat16, requires_grad=True)
x = torch.randn(2, 3)
y16 = (x.half() @ w16).relu().sum()
ybf = torch.tanh(x.bfloat16() @ wbf).float().sum()
loss = y16.float() + ybf
loss.backward()
""",
    "autocast_cpu_bfloat16_linear": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(4, 2)
X = torch.randn(3, 4)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    out = model(X)
    act = torch.relu(out)
loss = act.float().pow(2).sum()
loss.backward()
""",
    "complex_linear_layer_and_polar": """
import torch
torch.manual_seed(0)
W = torch.randn(3, 3, dtype=torch.cfloat, requires_grad=True)
mag = torch.rand(3, requires_grad=True)
phase = torch.randn(3, requires_grad=True)
z = torch.polar(mag, phase)
h = W @ z
real_view = torch.view_as_real(h)
loss = h.abs().sum() + real_view[:, 1].sum() + torch.fft.ifft(h).real.pow(2).sum()
loss.backward()
""",
    "cdist_and_linalg_decompositions": """
import torch
torch.manual_seed(0)
A = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
b = torch.randn(3, 2, dtype=torch.float64)
spd = A @ A.T + 3 * torch.eye(3, dtype=torch.float64)
x = torch.linalg.solve(spd, b)
L = torch.linalg.cholesky(spd)
Q, R = torch.linalg.qr(A)
S = torch.linalg.svdvals(A)
evals, evecs = torch.linalg.eigh(spd)
logdet = torch.logdet(spd)
inv = torch.linalg.inv(spd)
D = torch.cdist(A, A.flip(0), p=2)
nrm = torch.linalg.matrix_norm(A, ord="fro") + torch.linalg.vector_norm(A, ord=3)
loss = (x.sum() + L.diagonal().sum() + R.abs().sum() + S.sum() + evals.sum() + logdet
        + inv.trace() + D.sum() + nrm)
loss.backward()
""",
    # ---------------------------------------------------------------- whole small models
    "vae_step_reparameterisation": """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.mu = nn.Linear(8, 2)
        self.logvar = nn.Linear(8, 2)
        self.dec = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 6))
    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        eps = torch.randn_like(mu)
        z = mu + eps * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar
vae = VAE()
X = torch.rand(4, 6)
opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
for _ in range(2):
    opt.zero_grad()
    recon, mu, logvar = vae(X)
    rec = F.binary_cross_entropy_with_logits(recon, X, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = (rec + kld) / X.shape[0]
    loss.backward()
    opt.step()
""",
    "gan_step_two_optimizers": """
import torch
from torch import nn
torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 3))
D = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-2, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-2, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
real = torch.randn(4, 3) + 2
for _ in range(2):
    noise = torch.randn(4, 2)
    fake = G(noise)
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(4, 1)) + bce(D(fake.detach()), torch.zeros(4, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(4, 1))
    g_loss.backward()
    opt_g.step()
""",
    "policy_gradient_distributions": """
import torch
from torch import nn
from torch.distributions import Categorical, Normal
torch.manual_seed(0)
policy = nn.Linear(3, 4)
value = nn.Linear(3, 1)
states = torch.randn(5, 3)
dist = Categorical(logits=policy(states))
actions = dist.sample()
returns = torch.randn(5)
adv = returns - value(states).squeeze(1)
pg = -(dist.log_prob(actions) * adv.detach()).mean() - 0.01 * dist.entropy().mean()
mu = torch.zeros(2, requires_grad=True)
log_std = torch.zeros(2, requires_grad=True)
gauss = Normal(mu, log_std.exp())
sample = gauss.rsample((3,))
loss = pg + adv.pow(2).mean() + sample.pow(2).mean() - gauss.log_prob(sample).sum() * 0.1
loss.backward()
""",
    "siamese_shared_encoder_triplet": """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
anchor, positive, negative = torch.randn(3, 5, 4).unbind(0)
ea, ep, en = encoder(anchor), encoder(positive), encoder(negative)
triplet = F.triplet_margin_loss(ea, ep, en, margin=0.5)
cos = F.cosine_similarity(ea, ep, dim=1).mean()
normed = F.normalize(ea, dim=1)
contrast = F.cross_entropy(normed @ F.normalize(ep, dim=1).T / 0.1, torch.arange(5))
loss = triplet - cos + contrast
loss.backward()
""",
    # ---------------------------------------------------------------- more training patterns
    "nograd_view_then_base_written_with_grad": """
import torch
torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
buf = torch.zeros(3, 4)
with torch.no_grad():
    first_row = buf[0]
    first_row.add_(1.0)
buf[1] = w * 2
buf[2].mul_(3)
loss = (buf ** 2).sum()
loss.backward()
""",
    "nograd_view_of_activation_then_inplace": """
import torch
from torch import nn
torch.manual_seed(0)
lin = nn.Linear(3, 4)
h = lin(torch.randn(2, 3))
with torch.no_grad():
    peek = h[:, :2]
    stats = peek.mean()
h.relu_()
loss = h.sum()
loss.backward()
""",
    "checkpoint_sequential_reentrant_training": """
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint_sequential
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(5, 3, requires_grad=True)
for _ in range(2):
    opt.zero_grad()
    out = checkpoint_sequential(model, 2, X, use_reentrant=True)
    loss = out.pow(2).mean()
    loss.backward()
    opt.step()
""",
    "wgan_weight_clipping_data_clamp": """
import torch
from torch import nn
torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-2)
real, fake = torch.randn(4, 2) + 1, torch.randn(4, 2)
for _ in range(2):
    opt.zero_grad()
    loss = critic(fake).mean() - critic(real).mean()
    loss.backward()
    opt.step()
    for p in critic.parameters():
        p.data.clamp_(-0.1, 0.1)
""",
    "dqn_target_network_soft_update": """
import copy
import torch
from torch import nn
torch.manual_seed(0)
q_net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
target = copy.deepcopy(q_net)
target.requires_grad_(False)
opt = torch.optim.Adam(q_net.parameters(), lr=1e-2)
s, a, r, s2 = torch.randn(4, 3), torch.tensor([0, 1, 1, 0]), torch.randn(4), torch.randn(4, 3)
for _ in range(2):
    with torch.no_grad():
        y = r + 0.9 * target(s2).max(dim=1).values
    q = q_net(s).gather(1, a.unsqueeze(1)).squeeze(1)
    loss = nn.functional.smooth_l1_loss(q, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for tp, p in zip(target.parameters(), q_net.parameters()):
            tp.mul_(0.5).add_(p, alpha=0.5)
""",
    "load_state_dict_and_optimizer_state": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
other = nn.Linear(3, 2)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
X = torch.randn(4, 3)
model(X).sum().backward()
opt.step()
state = {k: v.clone() for k, v in model.state_dict().items()}
opt_state = opt.state_dict()
other.load_state_dict(state)
opt2 = torch.optim.Adam(other.parameters(), lr=0.1)
opt2.load_state_dict(opt_state)
opt2.zero_grad()
loss = other(X).pow(2).sum()
loss.backward()
opt2.step()
""",
    "dataloader_tensordataset_epochs": """
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
X, y = torch.randn(10, 3), torch.randint(0, 2, (10,))
shuffler = torch.Generator().manual_seed(1)
loader = DataLoader(TensorDataset(X, y), batch_size=4, shuffle=True, generator=shuffler)
model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
""",
    "maml_inner_loop_functional_call": """
import torch
from torch import nn
from torch.func import functional_call
torch.manual_seed(0)
model = nn.Linear(2, 1)
meta_opt = torch.optim.SGD(model.parameters(), lr=0.1)
xs, ys = torch.randn(4, 2), torch.randn(4, 1)
xq, yq = torch.randn(4, 2), torch.randn(4, 1)
params = dict(model.named_parameters())
inner = nn.functional.mse_loss(functional_call(model, params, (xs,)), ys)
grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
fast = {name: p - 0.5 * g for (name, p), g in zip(params.items(), grads)}
outer = nn.functional.mse_loss(functional_call(model, fast, (xq,)), yq)
meta_opt.zero_grad()
outer.backward()
meta_opt.step()
""",
    "knowledge_distillation_temperature": """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3)).eval()
student = nn.Linear(4, 3)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
X, labels = torch.randn(5, 4), torch.tensor([0, 1, 2, 1, 0])
T = 2.0
with torch.no_grad():
    soft = F.softmax(teacher(X) / T, dim=1)
logits = student(X)
kd = F.kl_div(F.log_softmax(logits / T, dim=1), soft, reduction="batchmean") * T * T
loss = 0.7 * kd + 0.3 * F.cross_entropy(logits, labels)
opt.zero_grad()
loss.backward()
opt.step()
""",
    "mixup_and_seq2seq_teacher_forcing": """
import torch
from torch import nn
torch.manual_seed(0)
enc = nn.GRU(3, 4, batch_first=True)
dec_cell = nn.GRUCell(2, 4)
out_layer = nn.Linear(4, 2)
src = torch.randn(2, 5, 3)
tgt = torch.randn(2, 3, 2)
lam = 0.3
mixed = lam * src + (1 - lam) * src.flip(0)
_, h = enc(mixed)
h = h[0]
inp = torch.zeros(2, 2)
loss = 0.0
for t in range(3):
    h = dec_cell(inp, h)
    pred = out_layer(h)
    loss = loss + (pred - tgt[:, t]).pow(2).mean()
    inp = tgt[:, t]
loss.backward()
""",
    "greedy_generation_with_kv_cache_no_grad": """
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(6, 4)
proj_k, proj_v, head = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 6)
tokens = torch.tensor([[1]])
k_cache = torch.zeros(1, 0, 4)
v_cache = torch.zeros(1, 0, 4)
with torch.no_grad():
    for _ in range(3):
        x = emb(tokens[:, -1:])
        k_cache = torch.cat([k_cache, proj_k(x)], dim=1)
        v_cache = torch.cat([v_cache, proj_v(x)], dim=1)
        att = torch.softmax(x @ k_cache.transpose(1, 2) / 2.0, dim=-1) @ v_cache
        next_tok = head(att).argmax(dim=-1)
        tokens = torch.cat([tokens, next_tok], dim=1)
logits = head(emb(tokens))
loss = nn.functional.cross_entropy(logits[0, :-1], tokens[0, 1:])
loss.backward()
""",
    "prune_l1_unstructured_forward_pre_hook": """
import torch
from torch import nn
import torch.nn.utils.prune as prune
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
prune.l1_unstructured(model[0], name="weight", amount=0.5)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(5, 4)
for _ in range(2):
    opt.zero_grad()
    loss = model(X).pow(2).mean()
    loss.backward()
    opt.step()
prune.remove(model[0], "weight")
""",
    "grad_scaler_cpu_unscale_and_clip": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
X = torch.randn(4, 3)
for _ in range(2):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(X).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    scaler.step(opt)
    scaler.update()
""",
    "saved_tensors_hooks_and_save_on_cpu": """
import torch
from torch.autograd.graph import saved_tensors_hooks, save_on_cpu
torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)
packed = []
def pack(t):
    packed.append(t.shape)
    return t.clone()
def unpack(t):
    return t * 1.0
with saved_tensors_hooks(pack, unpack):
    y = (x.exp() * x).sum()
with save_on_cpu(pin_memory=False):
    z = (x.sin() ** 2).sum()
loss = y + z
loss.backward()
""",
    "forward_mode_ad_dual_numbers": """
import torch
import torch.autograd.forward_ad as fwAD
torch.manual_seed(0)
x = torch.randn(3)
tangent = torch.tensor([1.0, 0.0, 2.0])
with fwAD.dual_level():
    dual = fwAD.make_dual(x, tangent)
    out = (dual.sin() * dual).sum()
    jvp = fwAD.unpack_dual(out).tangent
w = torch.randn(3, requires_grad=True)
loss = (w * jvp).sum() + (w * x).pow(2).sum()
loss.backward()
""",
    "gradcheck_small_double": """
import torch
torch.manual_seed(0)
a = torch.randn(3, dtype=torch.float64, requires_grad=True)
b = torch.randn(3, dtype=torch.float64, requires_grad=True)
ok = torch.autograd.gradcheck(lambda u, v: (u * v.exp()).sum(), (a, b))
ok2 = torch.autograd.gradgradcheck(lambda u: (u ** 3).sum(), (a,))
loss = (a * b).sum()
loss.backward()
""",
    "anomaly_mode_nan_in_backward_raises": """
import torch
torch.manual_seed(0)
w = torch.tensor([1.0, 0.0, 4.0], requires_grad=True)
loss = (w * 2).sum()
loss.backward()
with torch.autograd.detect_anomaly(check_nan=True):
    y = w.sqrt() * 0
    bad = (y / y.detach().abs().clamp(min=0)).nansum()
    bad.backward()
""",
    "spatial_transformer_grid_sample": """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
img = torch.randn(1, 2, 4, 4, requires_grad=True)
theta = torch.tensor([[[0.9, 0.1, 0.0], [-0.1, 0.9, 0.1]]], requires_grad=True)
grid = F.affine_grid(theta, size=(1, 2, 3, 3), align_corners=False)
warped = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=False)
padded = F.pad(img, (1, 1, 0, 2), mode="replicate")
loss = warped.pow(2).sum() + padded.mean()
loss.backward()
""",
    "full_nn_transformer_tiny": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                       dim_feedforward=16, dropout=0.0, batch_first=True)
src = torch.randn(2, 5, 8)
tgt = torch.randn(2, 3, 8)
tgt_mask = model.generate_square_subsequent_mask(3)
padding = torch.tensor([[False] * 5, [False] * 4 + [True]])
out = model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=padding)
loss = out.pow(2).mean()
loss.backward()
""",
    # ---------------------------------------------------------------- bigger tensors
    "mnist_like_mlp_adam_bigger_tensors": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 10)
)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
X = torch.randn(16, 1, 8, 8)
y = torch.randint(0, 10, (16,))
for _ in range(3):
    opt.zero_grad()
    logits = model(X)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    opt.step()
with torch.no_grad():
    accuracy = (model.eval()(X).argmax(1) == y).float().mean()
""",
    "small_cnn_16x16_sgd_bigger_tensors": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
    nn.Linear(64, 10),
)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
X = torch.randn(4, 1, 16, 16)
y = torch.tensor([1, 5, 9, 0])
for _ in range(2):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
""",
    "transformer_block_d32_bigger_tensors": """
import torch
from torch import nn
torch.manual_seed(0)
block = nn.TransformerEncoderLayer(
    d_model=32, nhead=4, dim_feedforward=64, dropout=0.1, batch_first=True, norm_first=True
)
head = nn.Linear(32, 1)
opt = torch.optim.AdamW(list(block.parameters()) + list(head.parameters()), lr=1e-3)
X = torch.randn(2, 12, 32)
mask = nn.Transformer.generate_square_subsequent_mask(12)
for _ in range(2):
    opt.zero_grad()
    loss = head(block(X, src_mask=mask, is_causal=True)).pow(2).mean()
    loss.backward()
    opt.step()
""",
    # ---------------------------------------------------------------- memory and grads set by hand
    # A write through NumPy moves no version counter, and no mode sees from_numpy: the
    # recorder must notice the foreign memory when the tensor is first used.
    "from_numpy_parameter_changed_through_numpy": """
import numpy as np
import torch
arr = np.array([1.0, -2.0, 3.0], dtype=np.float32)
w = torch.from_numpy(arr).requires_grad_()
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(2):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
    arr *= 0.5
""",
    "manual_grad_assignment_and_inplace_grad_ops": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
X = torch.randn(4, 3)
model(X).sum().backward()
model.weight.grad /= 4
model.bias.grad.data.clamp_(-0.5, 0.5)
opt.step()
model.weight.grad = torch.ones_like(model.weight)
model.bias.grad = None
opt.step()
opt.zero_grad(set_to_none=False)
""",
    "module_to_double_and_back": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
model(torch.randn(2, 3)).sum().backward()
model = model.double()
X = torch.randn(5, 3, dtype=torch.float64)
loss = model(X).pow(2).mean()
loss.backward()
model.float()
""",
    "sparse_adam_and_fused_adamw": """
import torch
from torch import nn
torch.manual_seed(0)
emb = nn.Embedding(8, 3, sparse=True)
lin = nn.Linear(3, 2)
opt_sparse = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
opt_dense = torch.optim.AdamW(lin.parameters(), lr=0.1, fused=True)
opt_fe = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1, foreach=True)
ids = torch.tensor([1, 3, 3, 7])
for _ in range(2):
    opt_sparse.zero_grad()
    opt_dense.zero_grad()
    loss = lin(emb(ids)).pow(2).sum()
    loss.backward()
    opt_sparse.step()
    opt_dense.step()
""",
    "complex_parameter_adam": """
import torch
torch.manual_seed(0)
z = torch.randn(3, dtype=torch.complex64, requires_grad=True)
target = torch.tensor([1 + 1j, -1j, 2.0], dtype=torch.complex64)
opt = torch.optim.Adam([z], lr=0.1)
for _ in range(2):
    opt.zero_grad()
    loss = (z - target).abs().pow(2).sum()
    loss.backward()
    opt.step()
""",
    # ---------------------------------------------------------------- graph features
    "multi_grad_hook_and_graph_introspection": """
import torch
from torch.autograd.graph import register_multi_grad_hook
torch.manual_seed(0)
a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
ya = a * 2
yb = b.exp()
fired = []
def count_grads(grads):
    fired.append(sum(g is not None for g in grads))
handle = register_multi_grad_hook((ya, yb), count_grads)
loss = (ya * yb).sum()
fn = loss.grad_fn
names = [fn.name()] + [f.name() for f, _ in fn.next_functions if f is not None]
saved = ya.grad_fn._saved_self if hasattr(ya.grad_fn, "_saved_self") else None
direct = yb.grad_fn(torch.ones(3))
loss.backward()
handle.remove()
""",
    "allow_mutation_on_saved_tensors": """
import torch
torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    y = x * 1
    z = y.sin()
    y.mul_(2)
    loss = (z + y).sum()
    loss.backward()
""",
    "func_jvp_vjp_grad_and_value_no_vmap": """
import torch
from torch.func import jvp, vjp, grad_and_value
torch.manual_seed(0)
x = torch.randn(3)
f = lambda t: (t.sin() * t.cos()).cumsum(0)
out, tangent = jvp(f, (x,), (torch.ones(3),))
out2, pullback = vjp(f, x)
(cot,) = pullback(torch.tensor([1.0, 0.0, -1.0]))
g, v = grad_and_value(lambda t: (t ** 2).sum())(x)
w = torch.randn(3, requires_grad=True)
loss = (w * (tangent + cot + g)).sum()
loss.backward()
""",
    # make_fx would trace a recorder's own snapshot copies into linearize's graph (and
    # run them as ops later): every copy must be taken below the user's dispatch modes.
    "func_linearize_make_fx": """
import torch
from torch.func import linearize
torch.manual_seed(0)
x = torch.randn(3)
out, lin = linearize(lambda t: (t.sin() * t.cos()).cumsum(0), x)
lin_t = lin(torch.ones(3))
w = torch.randn(3, requires_grad=True)
loss = (w * lin_t).sum()
loss.backward()
""",
    "linalg_eig_lstsq_pinv_matrix_exp": """
import torch
torch.manual_seed(0)
A = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
B = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
M = torch.randn(4, 3, dtype=torch.float64)
evals = torch.linalg.eigvals(A @ A.T + torch.eye(3, dtype=torch.float64))
sol = torch.linalg.lstsq(M, B).solution
P = torch.linalg.pinv(M @ A)
E = torch.linalg.matrix_exp(A * 0.1)
sign, logabs = torch.linalg.slogdet(A)
det = torch.linalg.det(A)
U, S, Vh = torch.linalg.svd(A, full_matrices=False)
loss = (evals.real.sum() + sol.sum() + P.sum() + E.trace() + logabs + det
        + (U[:, 0] * Vh[0]).abs().sum() + S[0])
loss.backward()
""",
    "tensor_subclass_with_torch_function": """
import torch
class Logged(torch.Tensor):
    calls = []
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})
torch.manual_seed(0)
base = torch.randn(3, requires_grad=True)
x = base.as_subclass(Logged)
y = (x * 2).sin().sum()
y.backward()
plain_value = torch.Tensor(y.detach())
""",
    "reshape_zoo_permute_unflatten_as_strided": """
import torch
torch.manual_seed(0)
x = torch.randn(2, 3, 4, requires_grad=True)
a = x.permute(2, 0, 1).contiguous().view(4, 6)
b = x.unflatten(2, (2, 2)).movedim(-1, 0)
c = x.as_strided((2, 2), (1, 2), 1)
d = x.narrow(1, 1, 2).unfold(2, 2, 1)
e = x.repeat_interleave(2, dim=0).roll(1, dims=2)
f = x.flip(1).tril(diagonal=-1)
g = x[torch.tensor([1, 0]), :, torch.tensor([3, 0])]
h = x.new_zeros(5).index_fill(0, torch.tensor([1, 3]), 2.0)
loss = a.sum() + b.pow(2).sum() + c.prod() + d.mean() + e.amax() + f.sum() + g.sum() + h.sum()
loss.backward()
""",
    "nan_gradient_through_where_sqrt": """
import torch
x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
y = torch.where(x > 0, x.sqrt(), torch.zeros_like(x))
safe = torch.where(x > 0, x.clamp(min=1e-6).sqrt(), torch.zeros_like(x))
loss = y.sum() + safe.sum()
loss.backward()
""",
    "random_ops_randperm_bernoulli_multinomial": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(4, 3)
X = torch.randn(6, 4)
perm = torch.randperm(6)
mask = torch.bernoulli(torch.full((6, 3), 0.7))
probs = model(X[perm]).softmax(dim=1)
picks = torch.multinomial(probs.detach(), num_samples=2, replacement=True)
noise = torch.randn_like(probs) * 0.01 + torch.rand(6, 3) * 0.01
torch.manual_seed(5)
again = torch.normal(mean=torch.zeros(3), std=torch.ones(3))
loss = (probs * mask + noise).gather(1, picks).log().neg().mean() + again.sum()
loss.backward()
""",
    "set_default_dtype_float64_in_script": """
import torch
torch.set_default_dtype(torch.float64)
try:
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    lin = torch.nn.Linear(3, 1)
    loss = lin(w.unsqueeze(0) * 1e-9 + 1).sum()
    loss.backward()
finally:
    torch.set_default_dtype(torch.float32)
""",
    # ---------------------------------------------------------------- more errors
    "error_inplace_on_leaf_requiring_grad": """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
loss = (w * w).sum()
loss.backward()
w.sub_(0.1 * w.grad)
""",
    "error_in_custom_function_forward": """
import torch
class Checked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if (x < 0).any():
            raise ValueError("negative input to Checked")
        ctx.save_for_backward(x)
        return x.sqrt()
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (2 * x.sqrt())
torch.manual_seed(0)
w = torch.tensor([1.0, 4.0], requires_grad=True)
for shift in (0.0, -5.0):
    loss = Checked.apply(w + shift).sum()
    loss.backward()
""",
    "error_python_keyerror_mid_training": """
import torch
from torch import nn
torch.manual_seed(0)
heads = nn.ModuleDict({"cls": nn.Linear(3, 2), "reg": nn.Linear(3, 1)})
X = torch.randn(4, 3)
for task in ["cls", "reg", "seg"]:
    out = heads[task](X)
    out.pow(2).mean().backward()
""",
    "error_integer_tensor_requires_grad": """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
(w * 3).sum().backward()
counts = torch.tensor([1, 2, 3], requires_grad=True)
""",
    # ---------------------------------------------------------------- module and optimizer hooks
    "global_module_hooks_modify_outputs": """
import torch
from torch import nn
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
def pre(module, inputs):
    if isinstance(module, nn.Linear):
        return (inputs[0] * 0.5,)
def post(module, inputs, output):
    if isinstance(module, nn.ReLU):
        return output + 0.1
h1 = register_module_forward_pre_hook(pre)
h2 = register_module_forward_hook(post)
try:
    loss = model(torch.randn(4, 3)).sum()
finally:
    h1.remove()
    h2.remove()
loss.backward()
""",
    "optimizer_step_hooks_project_params": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
def project(optimizer, args, kwargs):
    with torch.no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                p.clamp_(min=0.0)
def scale_grads(optimizer, args, kwargs):
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad.mul_(2)
opt.register_step_pre_hook(scale_grads)
opt.register_step_post_hook(project)
X = torch.randn(5, 3)
for _ in range(2):
    opt.zero_grad()
    model(X).pow(2).mean().backward()
    opt.step()
""",
    "custom_optimizer_subclass": """
import torch
from torch import nn
class SignSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.01, decay=0.0):
        super().__init__(params, dict(lr=lr, decay=decay))
    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                state["steps"] = state.get("steps", 0) + 1
                p.mul_(1 - group["decay"]).add_(p.grad.sign(), alpha=-group["lr"])
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
opt = SignSGD(model.parameters(), lr=0.05, decay=0.01)
X, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(3):
    opt.zero_grad()
    nn.functional.mse_loss(model(X), y).backward()
    opt.step()
""",
    "grad_scaler_skips_step_on_inf": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=3e38, growth_interval=1)
X = torch.randn(4, 3) * 100
for _ in range(3):
    opt.zero_grad()
    loss = model(X).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
scale = scaler.get_scale()
""",
    "meta_device_deferred_init_to_empty": """
import torch
from torch import nn
torch.manual_seed(0)
with torch.device("meta"):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model = model.to_empty(device="cpu")
with torch.no_grad():
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            m.bias.fill_(0.01)
loss = model(torch.randn(2, 3)).sum()
loss.backward()
""",
    # The reentrant checkpoint's inner pass reaches AccumulateGrad nodes the outer pass
    # runs too: each accumulation is one event.
    "checkpoint_non_reentrant_dropout_rng_replay": """
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)
block = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Dropout(0.3), nn.Linear(8, 4))
x = torch.randn(3, 4, requires_grad=True)
y = checkpoint(block, x, use_reentrant=False, preserve_rng_state=True)
z = checkpoint(block, y, use_reentrant=True)
loss = (y * z).sum()
loss.backward()
""",
    # The engine's batched gradients (is_grads_batched) have no numbers to read: the
    # trace marks them batched, and recording goes on.
    "jacobian_hessian_vectorized": """
import torch
from torch.autograd.functional import jacobian, hessian
torch.manual_seed(0)
x = torch.randn(3)
J = jacobian(lambda t: t.exp() * t.sum(), x, vectorize=True)
H = hessian(lambda t: (t ** 3).sum() * t[0], x, vectorize=True)
w = torch.randn(3, requires_grad=True)
loss = (J @ w).sum() + (H @ w).sum()
loss.backward()
""",
    # ---------------------------------------------------------------- everyday script habits
    # A step() inside another step() (Lookahead): both steps' param_update events.
    "lookahead_wrapper_nested_optimizer_steps": """
import torch
from torch import nn
class Lookahead(torch.optim.Optimizer):
    def __init__(self, base, k=2, alpha=0.5):
        self.base, self.k, self.alpha, self.count = base, k, alpha, 0
        super().__init__(base.param_groups, dict(lr=0.0))
        self.slow = [p.detach().clone() for g in base.param_groups for p in g["params"]]
    @torch.no_grad()
    def step(self, closure=None):
        self.base.step()
        self.count += 1
        if self.count % self.k == 0:
            params = [p for g in self.base.param_groups for p in g["params"]]
            for slow, p in zip(self.slow, params):
                slow.add_(p - slow, alpha=self.alpha)
                p.copy_(slow)
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = Lookahead(torch.optim.SGD(model.parameters(), lr=0.1))
X, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    opt.zero_grad()
    nn.functional.mse_loss(model(X), y).backward()
    opt.step()
""",
    "caught_errors_then_training_continues": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(5, 3)
errors = []
loss = model(X).mean()
loss.backward()
try:
    loss.backward()
except RuntimeError as e:
    errors.append(type(e).__name__)
try:
    model(torch.randn(5, 4))
except RuntimeError as e:
    errors.append(type(e).__name__)
opt.step()
opt.zero_grad()
loss = model(X).pow(2).mean()
loss.backward()
opt.step()
""",
    # A step() that raised: recording resumes after it.
    "caught_error_inside_optimizer_step_closure": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(5, 3)
def bad_closure():
    loss = model(X).mean()
    loss.backward()
    raise ValueError("closure failed")
try:
    opt.step(bad_closure)
except ValueError:
    pass
opt.zero_grad()
loss = model(X).pow(2).mean()
loss.backward()
opt.step()
""",
    "optimizer_step_fused_into_backward_hooks": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizers = {p: torch.optim.Adam([p], lr=0.05, foreach=False) for p in model.parameters()}
def step_now(p):
    optimizers[p].step()
    optimizers[p].zero_grad()
for p in model.parameters():
    p.register_post_accumulate_grad_hook(step_now)
X = torch.randn(6, 3)
for _ in range(2):
    loss = model(X).pow(2).mean()
    loss.backward()
""",
    "backward_inputs_non_leaf_gets_grad": """
import torch
torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
h = w * 2
out = (h.sin() * h).sum()
out.backward(inputs=[h], retain_graph=True)
g_h = h.grad
out.backward(inputs=[w])
""",
    "print_format_and_early_stopping": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.2)
X, y = torch.randn(8, 2), torch.randn(8, 1)
best = float("inf")
history = []
for epoch in range(4):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    opt.step()
    print(f"epoch {epoch}: loss={loss:.4f} w={model.weight.data}")
    history.append(loss.item())
    if loss < best:
        best = loss.detach()
    elif max(history[-2:]) > min(history):
        break
print(model.weight, repr(model.bias.grad))
""",
    "gcn_sparse_adjacency": """
import torch
from torch import nn
torch.manual_seed(0)
edges = torch.tensor([[0, 1, 1, 2, 2, 3, 0, 1, 2, 3], [1, 0, 2, 1, 3, 2, 0, 1, 2, 3]])
values = torch.ones(edges.shape[1])
deg = torch.zeros(4).index_add(0, edges[0], values)
norm = values / (deg[edges[0]] * deg[edges[1]]).sqrt()
A = torch.sparse_coo_tensor(edges, norm, (4, 4)).coalesce()
feats = torch.randn(4, 3)
lin1, lin2 = nn.Linear(3, 5), nn.Linear(5, 2)
h = torch.relu(torch.sparse.mm(A, lin1(feats)))
out = torch.sparse.mm(A, lin2(h))
S = torch.sparse_coo_tensor(edges[:, :4], torch.randn(4), (4, 4), requires_grad=True)
extra = torch.sparse.sum(S * S) + (S @ feats).sum()
loss = nn.functional.cross_entropy(out, torch.tensor([0, 1, 1, 0])) + extra
loss.backward()
""",
    "save_load_checkpoint_bytesio": """
import io
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.Adam(model.parameters(), lr=0.1)
model(torch.randn(4, 3)).sum().backward()
opt.step()
buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buffer)
buffer.seek(0)
ckpt = torch.load(buffer, weights_only=True)
restored = nn.Linear(3, 2)
restored.load_state_dict(ckpt["model"])
opt2 = torch.optim.Adam(restored.parameters(), lr=0.1)
opt2.load_state_dict(ckpt["opt"])
loss = restored(torch.ones(1, 3)).sum()
loss.backward()
opt2.step()
""",
    # ---------------------------------------------------------------- errors
    "error_in_backward_hook_after_steps": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(3, 2)
for step in range(3):
    opt.zero_grad()
    out = model(X)
    if step == 2:
        def boom(g):
            raise RuntimeError("hook says no")
        out.register_hook(boom)
    out.pow(2).sum().backward()
    opt.step()
""",
    "error_shape_mismatch_in_model_after_backward": """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
X = torch.randn(5, 3)
loss = model(X).mean()
loss.backward()
opt.step()
opt.zero_grad()
loss = model(X.T).mean()
loss.backward()
""",
}
