"""torch.fx.experimental: of torch's experimental FX tools, the graph optimizations programs import
(optimization: conv/linear + batch-norm fusion, dropout removal, subgraph extraction)."""
