"""A Tessera model graph (`tessera describe FILE --json`) as a PyTorch module, layer for layer:
the same ops, parameters, edges and shapes, so that the two can be trained side by side.

    from torch_model import TesseraNet
    net = TesseraNet(json.load(open("model.json")))
    loss = net(inputs, targets)

Average pooling excludes padding from its count and global or adaptive pooling maps onto
PyTorch's adaptive pooling, as Tessera's kernels do. Sequence tensors are N x C x T, as Tessera
lays them out; a head tied to an embedding (shared_with) reads the embedding's table and keeps
only its bias. `kink_sides` makes the (leaky) ReLUs take another implementation's side where
their input is within rounding of zero (_SidedKink). `tessera_parameters` lists a layer's PyTorch parameters in the order of Tessera's
flat parameter block (the real backend's executors), for loading Tessera's weights and reading
the gradients back (analysis/torch_model_step.py). Needs PyTorch (Debian's python3-torch).
"""

import math

import torch
from torch import nn
from torch.nn import functional


def _conv(rank, transposed):
    names = {1: "1d", 2: "2d", 3: "3d"}
    return getattr(nn, ("ConvTranspose" if transposed else "Conv") + names[rank])


def _axes(values, rank):
    return tuple(values) if len(values) == rank else tuple(values) * rank


class _PositionTable(nn.Module):
    """A learned position embedding: row t added at step t."""

    def __init__(self, positions, dimension):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(positions, dimension))


class _TiedHead(nn.Module):
    """A projection over another layer's table: only its bias (if any) is its own."""

    def __init__(self, classes, bias):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(classes)) if bias else None


class _SidedKink(torch.autograd.Function):
    """A (leaky) ReLU whose derivative, where its input lies within `tolerance` x the input's RMS
    of zero, is taken on the side `positive` says (where another implementation's float32 input
    fell: either side is a correct float32 answer there, and the gradients below follow it);
    elsewhere its own. The count of such inputs on the other side lands in `taken`."""

    @staticmethod
    def forward(ctx, x, positive, slope, tolerance, taken):
        near = x.abs() <= tolerance * x.pow(2).mean().sqrt()
        side = torch.where(near, positive, x > 0)
        taken.append(int((side != (x > 0)).sum()))
        ctx.save_for_backward(side)
        ctx.slope = slope
        return torch.where(x > 0, x, x * slope)

    @staticmethod
    def backward(ctx, gradient):
        (side,) = ctx.saved_tensors
        return gradient * torch.where(side, 1.0, ctx.slope).to(gradient.dtype), None, None, None, None


def _over_steps(function, x):
    """`function` on N x T x C of an N x C x T tensor, back to N x C x T."""
    return function(x.transpose(1, 2)).transpose(1, 2)


class TesseraNet(nn.Module):
    """Runs the layers in the graph's (topological) order; the losses' sum is the output."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        # Layer name -> where another implementation's (leaky) ReLU output was positive, and the
        # reach (x the input's RMS) within which its side is taken (_SidedKink); per layer, the
        # inputs taken on the other side in the last forward.
        self.kink_sides = {}
        self.kink_tolerance = 0.0
        self.kinks_taken = {}
        self.modules_by_name = nn.ModuleDict()
        for layer in graph["layers"]:
            module = self._module(layer)
            if module is not None:
                self.modules_by_name[layer["name"]] = module

    @staticmethod
    def _module(layer):
        op, p = layer["op"], layer["params"]
        inputs = layer["input_shapes"]
        if op in ("conv", "transposed_conv"):
            rank = len(inputs[0]["spatial"])
            transposed = op == "transposed_conv"
            extra = {"output_padding": _axes(p["output_padding"], rank)} if transposed else {}
            return _conv(rank, transposed)(
                inputs[0]["channels"], p["out_channels"], _axes(p["kernel"], rank),
                stride=_axes(p["stride"], rank), padding=_axes(p["padding"], rank),
                dilation=_axes(p["dilation"], rank), groups=p["groups"], bias=p["bias"], **extra)
        if op == "batch_norm":
            rank = len(inputs[0]["spatial"])
            norm = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[max(rank, 1)]
            return norm(inputs[0]["channels"], affine=p["affine"])
        if op == "fully_connected":
            features = inputs[0]["channels"] * math.prod(inputs[0]["spatial"])
            return nn.Linear(features, p["out_features"], bias=p["bias"])
        channels = inputs[0]["channels"] if inputs else 0
        if op == "embedding" and not p["shared_with"]:
            return nn.Embedding(p["vocabulary"], p["dimension"])
        if op == "position_embedding":
            return _PositionTable(p["positions"], channels)
        if op == "layer_norm":
            return nn.LayerNorm(channels, eps=1e-5, elementwise_affine=p["affine"])
        if op == "self_attention":
            return nn.MultiheadAttention(channels, p["heads"], bias=p["bias"])
        if op == "projection":
            if p["sampled"]:
                raise ValueError(f"layer {layer['name']}: a sampled softmax is not built here")
            if p["shared_with"]:
                return _TiedHead(p["out_features"], p["bias"])
            return nn.Linear(channels, p["out_features"], bias=p["bias"])
        return None

    def _sequence_layer(self, layer, x):
        """A transformer layer on N x C x T."""
        name, op, p = layer["name"], layer["op"], layer["params"]
        module = self.modules_by_name[name] if name in self.modules_by_name else None
        if op == "embedding":
            table = self.modules_by_name[p["shared_with"] or name].weight
            return functional.embedding(x[:, p["channel"], :].long(), table).transpose(1, 2)
        if op == "position_embedding":
            return x + module.weight[:x.shape[2]].t().unsqueeze(0)
        if op == "layer_norm":
            return _over_steps(module, x)
        if op == "self_attention":
            sequence = x.permute(2, 0, 1)  # T x N x C
            steps = x.shape[2]
            mask = (torch.ones(steps, steps, dtype=torch.bool, device=x.device).triu(1)
                    if p["causal"] else None)
            out, _ = module(sequence, sequence, sequence, need_weights=False, attn_mask=mask)
            return out.permute(1, 2, 0)
        if p["shared_with"]:  # a projection tied to an embedding's table
            table = self.modules_by_name[p["shared_with"]].weight
            return _over_steps(lambda v: functional.linear(v, table, module.bias), x)
        return _over_steps(module, x)

    def tessera_parameters(self, layer):
        """The layer's parameters in the order of Tessera's flat block: tables, W_qkv, b_qkv,
        W_o, b_o; a matrix before its bias; a layer norm's scale before its shift."""
        name, op, p = layer["name"], layer["op"], layer["params"]
        module = self.modules_by_name[name] if name in self.modules_by_name else None
        if module is None:
            return []
        if op in ("embedding", "position_embedding"):
            return [module.weight]
        if op == "layer_norm":
            return [module.weight, module.bias] if p["affine"] else []
        if op == "self_attention":
            if not p["bias"]:
                return [module.in_proj_weight, module.out_proj.weight]
            return [module.in_proj_weight, module.in_proj_bias, module.out_proj.weight,
                    module.out_proj.bias]
        if op == "projection" and p["shared_with"]:
            return [module.bias] if module.bias is not None else []
        if op in ("projection", "fully_connected", "conv"):  # out x in (x kernel), then biases
            return [module.weight] + ([module.bias] if module.bias is not None else [])
        if op == "batch_norm":
            return [module.weight, module.bias] if p["affine"] else []
        raise ValueError(f"layer {name}: the layout of op {op}'s parameters in Tessera is not "
                         "mapped here (convolutions, batch-norm, fully connected and transformer "
                         "layers are)")

    def _pool(self, layer, x):
        p = layer["params"]
        rank = x.dim() - 2
        maximum = p["mode"] == "max"
        if p["global"] or p["adaptive_output"] > 0:
            size = 1 if p["global"] else p["adaptive_output"]
            name = ("adaptive_max_pool" if maximum else "adaptive_avg_pool") + f"{rank}d"
            return getattr(functional, name)(x, size)
        name = ("max_pool" if maximum else "avg_pool") + f"{rank}d"
        extra = {} if maximum else {"count_include_pad": False}
        return getattr(functional, name)(x, _axes(p["kernel"], rank), _axes(p["stride"], rank),
                                         _axes(p["padding"], rank), ceil_mode=p["ceil_mode"],
                                         **extra)

    def forward(self, inputs, targets, shapes=None):
        """The sum of the losses; `shapes` (a dict), when given, receives each layer's output
        shape per sample."""
        values = {}
        total = None
        for layer in self.graph["layers"]:
            name, op, p = layer["name"], layer["op"], layer["params"]
            xs = [values[producer] for producer in layer["inputs"]]
            if op == "input":
                y = inputs
            elif op in ("conv", "transposed_conv", "batch_norm"):
                y = self.modules_by_name[name](xs[0])
            elif op == "fully_connected":
                y = self.modules_by_name[name](torch.flatten(xs[0], 1))
            elif op == "pool":
                y = self._pool(layer, xs[0])
            elif op in ("relu", "leaky_relu"):
                slope = p["negative_slope"] if op == "leaky_relu" else 0.0
                if name in self.kink_sides and slope >= 0:  # y > 0 shows the side x took
                    taken = []
                    y = _SidedKink.apply(xs[0], self.kink_sides[name].reshape(xs[0].shape),
                                         slope, self.kink_tolerance, taken)
                    self.kinks_taken[name] = taken[0]
                else:
                    y = functional.leaky_relu(xs[0], slope) if slope else functional.relu(xs[0])
            elif op in ("embedding", "position_embedding", "layer_norm", "self_attention",
                        "projection"):
                y = self._sequence_layer(layer, xs[0])
            elif op == "gelu":
                y = functional.gelu(xs[0], approximate=p["approximate"])
            elif op == "dropout":
                y = functional.dropout(xs[0], p["drop_probability"], self.training)
            elif op == "add":
                y = xs[0]
                for other in xs[1:]:
                    y = y + other
            elif op == "concat":
                y = torch.cat(xs, dim=1)
            elif op == "mse_loss":
                y = functional.mse_loss(xs[0], targets.reshape(xs[0].shape))
            elif op == "softmax_cross_entropy":
                logits = xs[0] if xs[0].dim() > 2 else torch.flatten(xs[0], 1)
                y = functional.cross_entropy(logits, targets)
            else:
                raise ValueError(f"layer {name}: op {op} is not built here")
            if op in ("mse_loss", "softmax_cross_entropy"):
                total = y if total is None else total + y
            values[name] = y
            if shapes is not None and op not in ("mse_loss", "softmax_cross_entropy"):
                shapes[name] = list(y.shape[1:])
        return total


def synthetic_batch(graph, batch):
    """Random inputs of the model's input shape and targets of its first loss's kind."""
    first = graph["layers"][0]["output_shape"]
    inputs = torch.randn(batch, first["channels"], *first["spatial"])
    for layer in graph["layers"]:
        if layer["op"] == "mse_loss":
            shape = layer["input_shapes"][0]
            return inputs, torch.randn(batch, shape["channels"], *shape["spatial"])
        if layer["op"] == "softmax_cross_entropy":
            shape = layer["input_shapes"][0]
            return inputs, torch.randint(0, shape["channels"], (batch, *shape["spatial"]))
    raise ValueError(f"model {graph['name']} has no loss")
