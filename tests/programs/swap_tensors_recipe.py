"""The swap_tensors recipe's plain-tensor parts (torch.utils.swap_tensors, torch.__future__'s
swap_module_params_on_conversion with an optimizer holding the parameters); takes the library's name."""
import sys, importlib
torch = importlib.import_module(sys.argv[1]); sys.modules['torch'] = torch
import weakref
t1 = torch.arange(2); t2 = torch.arange(3)
print(f"Before swapping, t1: {t1}, t2: {t2}")
torch.utils.swap_tensors(t1, t2)
print(f"After swapping, t1: {t1}, t2: {t2}")
a = torch.ones(2, requires_grad=True); b = torch.zeros(3, 2)
class S(torch.Tensor): pass
s = torch.ones(2).as_subclass(S); s.foo = 1; u = torch.zeros(3)
torch.utils.swap_tensors(s, u); print(type(s).__name__, type(u).__name__, u.foo, s.tolist(), hasattr(s, 'foo'))
torch.utils.swap_tensors(a, b); print(a.requires_grad, b.requires_grad, a.shape, b.shape, b.is_leaf)
(b * 2).sum().backward(); print(b.grad)
c = torch.ones(1); r = weakref.ref(c)
try: torch.utils.swap_tensors(a, c)
except RuntimeError as e: print("RE", e)
torch.__future__.set_swap_module_params_on_conversion(True)
m = torch.nn.Linear(3, 5); opt = torch.optim.SGD(m.parameters(), lr=0.1)
w = id(m.weight); m(torch.ones(1, 3)).sum().backward()
m.double()
print(id(m.weight) == w, m.weight.dtype, m.weight.grad.dtype, opt.param_groups[0]['params'][0] is m.weight, type(m.weight).__name__)
opt.step(); print(m.weight.dtype)
torch.__future__.set_swap_module_params_on_conversion(False)
print(torch.__future__.get_swap_module_params_on_conversion(), torch.__future__.get_overwrite_module_params_on_conversion())
