"""Recurrent cells' gradients in recorded ops: what the fused cells'
backward (src/python/autograd/FormulasRNN.c) runs under create_graph, so
double backward goes through them. The math and the workspace layouts are
those of src/TH/generic/THTensorRNN.c; a plain backward runs that kernel."""


def lstm_cell_grad(grad_hy, grad_cy, grad_ws, cx, cy, ws):
    i, f, g, o = ws.chunk(4, 1)
    tc = cy.tanh()
    dc = grad_hy * o * (1 - tc * tc)
    if grad_cy is not None:
        dc = dc + grad_cy
    di, df, dg, do = dc * g, dc * cx, dc * i, grad_hy * tc
    if grad_ws is not None:   # ws is part of the recorded graph in double backward
        wi, wf, wg, wo = grad_ws.chunk(4, 1)
        di, df, dg, do = di + wi, df + wf, dg + wg, do + wo
    dgates = _cat([di * i * (1 - i), df * f * (1 - f), dg * (1 - g * g), do * o * (1 - o)])
    return dgates, dc * f


def gru_cell_grad(grad_hy, grad_ws, hx, ws):
    r, z, n, hn = ws.chunk(4, 1)
    dn, dz, dhx = grad_hy * (1 - z), grad_hy * (hx - n), grad_hy * z
    if grad_ws is not None:
        wr, wz, wn, whn = grad_ws.chunk(4, 1)
        dn, dz = dn + wn, dz + wz
    dnp = dn * (1 - n * n)
    dr = dnp * hn
    dhn = dnp * r
    if grad_ws is not None:
        dr, dhn = dr + wr, dhn + whn
    drp, dzp = dr * r * (1 - r), dz * z * (1 - z)
    return _cat([drp, dzp, dnp]), _cat([drp, dzp, dhn]), dhx


def _cat(parts):
    import cthtorch
    return cthtorch.cat(parts, 1)
