"""The meta device as the tutorials use it, printed for comparison with torch:

1. "Tips for loading an nn.Module from a checkpoint": build the model under
   `with torch.device('meta')`, then load_state_dict(assign=True), and the
   to_empty(device='cpu') route;
2. the model-ensembling tutorial: stack_module_state, a meta copy of one model
   as the skeleton, functional_call under vmap;
3. the end of the swap_tensors recipe: to_empty and load_state_dict(assign=True)
   with set_swap_module_params_on_conversion;
4. shape inference: ops on meta tensors give shapes, dtypes and strides only.

Run as `python meta_device_recipes.py cthtorch` or `... torch`."""
import copy
import importlib
import sys

torch = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "cthtorch")
nn = torch.nn
F = nn.functional


def show(label, t):
    print(label, tuple(t.shape), str(t.dtype), t.device.type, t.is_meta, tuple(t.stride()))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 6 * 6, 16)
        self.ln = nn.LayerNorm(16)
        self.emb = nn.Embedding(10, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x, idx):
        x = F.relu(self.bn(self.conv(x)))
        x = torch.flatten(x, 1)
        x = self.ln(self.fc1(x)) + self.emb(idx)
        return F.log_softmax(self.fc2(x), dim=1)


torch.manual_seed(0)
x = torch.randn(2, 1, 8, 8)
idx = torch.tensor([1, 7])
reference = Net().eval()
state = reference.state_dict()
expected = reference(x, idx)

# 1. checkpoint loading: a meta skeleton, then the checkpoint's tensors assigned
with torch.device("meta"):
    meta_model = Net()
for name, p in meta_model.named_parameters():
    show("param " + name, p)
for name, b in meta_model.named_buffers():
    show("buffer " + name, b)
print("meta state_dict", sorted(k for k, v in meta_model.state_dict().items() if v.is_meta))
meta_model.load_state_dict(state, assign=True)
meta_model.eval()
print("assigned", all(not p.is_meta for p in meta_model.parameters()),
      all(not b.is_meta for b in meta_model.buffers()))
print("same output", torch.allclose(meta_model(x, idx), expected))

# ... and the to_empty route: real (uninitialised) storage on the CPU, then copy
with torch.device("meta"):
    empty_model = Net()
empty_model.to_empty(device="cpu")
show("to_empty fc1.weight", empty_model.fc1.weight)
empty_model.load_state_dict(state)
empty_model.eval()
print("to_empty output", torch.allclose(empty_model(x, idx), expected))

# Module.to('meta') and deepcopy of a meta module
moved = copy.deepcopy(reference).to("meta")
show("to(meta) conv.weight", moved.conv.weight)
twin = copy.deepcopy(moved)
show("deepcopy meta fc2.bias", twin.fc2.bias)
print("deepcopy is a new tensor", twin.fc2.bias is not moved.fc2.bias)
show("meta module forward", moved(x.to("meta"), idx.to("meta")))


# 2. model ensembling: stack the states, run the meta skeleton functionally
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


models = [MLP() for _ in range(3)]
params, buffers = torch.func.stack_module_state(models)
base = copy.deepcopy(models[0]).to("meta")
show("ensemble base fc1.weight", base.fc1.weight)


def fmodel(params, buffers, x):
    return torch.func.functional_call(base, (params, buffers), (x,))


data = torch.randn(5, 8)
ensembled = torch.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data)
looped = torch.stack([m(data) for m in models])
show("ensembled", ensembled)
print("ensemble matches", torch.allclose(ensembled, looped, atol=1e-6))

# 3. the swap_tensors recipe's end
torch.__future__.set_swap_module_params_on_conversion(True)
with torch.device("meta"):
    lin = nn.Linear(3, 5)
weight_obj = lin.weight
lin.to_empty(device="cpu")
print("to_empty keeps the Parameter object", lin.weight is weight_obj, lin.weight.is_meta)
with torch.device("meta"):
    lin2 = nn.Linear(3, 5)
sd = nn.Linear(3, 5).state_dict()
lin2.load_state_dict(sd, assign=True)
print("assign loads", torch.equal(lin2.weight, sd["weight"]), type(lin2.weight).__name__)
torch.__future__.set_swap_module_params_on_conversion(False)

# 4. shape inference
a = torch.empty(4, 3, device="meta")
b = torch.empty(3, 5, device="meta", dtype=torch.float64)
print(repr(a))
print(repr(torch.empty(2, dtype=torch.int64, device="meta")))
show("matmul", a.double() @ b)
show("broadcast add", a + torch.empty(1, 3, device="meta", dtype=torch.float16))
show("int + float scalar", torch.ones(2, 3, dtype=torch.int32, device="meta") * 1.5)
show("cat", torch.cat([a, a], dim=1))
show("stack", torch.stack([a, a]))
show("transpose", a.t())
show("permuted exp", torch.exp(torch.empty(2, 3, 4, device="meta").permute(2, 0, 1)))
show("sum", a.sum(1))
show("mean keepdim", a.mean(0, keepdim=True))
show("argmax", a.argmax(1))
show("max values", a.max(1).values)
show("conv2d", F.conv2d(torch.empty(2, 3, 10, 10, device="meta"), torch.empty(8, 3, 3, 3, device="meta"),
                        stride=2, padding=1))
show("softmax", torch.softmax(a, 0))
show("zeros_like", torch.zeros_like(a))
show("empty_like cpu", torch.empty_like(a, device="cpu"))
print("data_ptr", a.data_ptr())
for what, fn in (("to cpu", lambda: a.to("cpu")), ("item", lambda: torch.empty((), device="meta").item()),
                 ("mixed", lambda: a + torch.ones(4, 3))):
    try:
        fn()
        print(what, "no error")
    except Exception as e:  # noqa: BLE001
        print(what, type(e).__name__, str(e).split("\n")[0])
