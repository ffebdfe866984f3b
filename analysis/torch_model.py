"""A Tessera model graph (`tessera describe FILE --json`) as a PyTorch module, layer for layer:
the same ops, parameters, edges and shapes, so that the two can be trained side by side.

    from torch_model import TesseraNet
    net = TesseraNet(json.load(open("model.json")))
    loss = net(inputs, targets)

Average pooling excludes padding from its count and global or adaptive pooling maps onto
PyTorch's adaptive pooling, as Tessera's kernels do. Needs PyTorch (Debian's python3-torch).
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


class TesseraNet(nn.Module):
    """Runs the layers in the graph's (topological) order; the losses' sum is the output."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
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
        return None

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
            elif op == "relu":
                y = functional.relu(xs[0])
            elif op == "leaky_relu":
                y = functional.leaky_relu(xs[0], p["negative_slope"])
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
