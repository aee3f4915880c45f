"""torch._functorch: what the functorch package (functorch.make_functional, functorch.vmap ...) is made of.
The transforms are cthtorch.func's; this package adds functorch's module-to-function API and its deprecated
aliases that warn as torch's do."""
