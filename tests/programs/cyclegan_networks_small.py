# Adapted from junyanz/pytorch-CycleGAN-and-pix2pix, models/networks.py (condensed; same layers and helpers).
# Copyright (c) 2017, Jun-Yan Zhu and Taesung Park. All rights reserved. BSD 2-Clause License:
# Redistribution and use in source and binary forms, with or without modification, are permitted provided that
# the following conditions are met: 1. Redistributions of source code must retain the above copyright notice,
# this list of conditions and the following disclaimer. 2. Redistributions in binary form must reproduce the above
# copyright notice, this list of conditions and the following disclaimer in the documentation and/or other
# materials provided with the distribution. THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS
# "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
# CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES
# (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR
# BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR
# TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF
# THE POSSIBILITY OF SUCH DAMAGE.
"""CycleGAN/pix2pix networks: ResnetGenerator (reflection pads, instance/batch norm, dropout, transposed convs with
output_padding), PatchGAN NLayerDiscriminator, GANLoss (lsgan, vanilla, wgangp with the gradient penalty through
autograd.grad(create_graph=True)), init_weights (normal/xavier/orthogonal/kaiming), get_scheduler (linear lambda,
cosine, plateau) and a UnetGenerator step, on synthetic images. Usage: cyclegan_networks_small.py cthtorch|torch"""
import sys, importlib, functools, types
torch = importlib.import_module(sys.argv[1]); nn = torch.nn; init = torch.nn.init; lr_scheduler = torch.optim.lr_scheduler
def get_norm_layer(norm_type='instance'):
    if norm_type == 'batch': return functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
    if norm_type == 'instance': return functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
    return lambda x: nn.Identity()
def get_scheduler(optimizer, opt):
    if opt.lr_policy == 'linear':
        def lambda_rule(epoch): return 1.0 - max(0, epoch + opt.epoch_count - opt.n_epochs) / float(opt.n_epochs_decay + 1)
        return lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda_rule)
    if opt.lr_policy == 'step': return lr_scheduler.StepLR(optimizer, step_size=opt.lr_decay_iters, gamma=0.1)
    if opt.lr_policy == 'plateau': return lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.2, threshold=0.01, patience=5)
    return lr_scheduler.CosineAnnealingLR(optimizer, T_max=opt.n_epochs, eta_min=0)
def init_weights(net, init_type='normal', init_gain=0.02):
    def init_func(m):
        classname = m.__class__.__name__
        if hasattr(m, 'weight') and (classname.find('Conv') != -1 or classname.find('Linear') != -1):
            if init_type == 'normal': init.normal_(m.weight.data, 0.0, init_gain)
            elif init_type == 'xavier': init.xavier_normal_(m.weight.data, gain=init_gain)
            elif init_type == 'kaiming': init.kaiming_normal_(m.weight.data, a=0, mode='fan_in')
            elif init_type == 'orthogonal': init.orthogonal_(m.weight.data, gain=init_gain)
            if hasattr(m, 'bias') and m.bias is not None: init.constant_(m.bias.data, 0.0)
        elif classname.find('BatchNorm2d') != -1:
            init.normal_(m.weight.data, 1.0, init_gain); init.constant_(m.bias.data, 0.0)
    print('initialize network with %s' % init_type); net.apply(init_func)
class GANLoss(nn.Module):
    def __init__(self, gan_mode, target_real_label=1.0, target_fake_label=0.0):
        super(GANLoss, self).__init__()
        self.register_buffer('real_label', torch.tensor(target_real_label)); self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.gan_mode = gan_mode
        self.loss = nn.MSELoss() if gan_mode == 'lsgan' else nn.BCEWithLogitsLoss() if gan_mode == 'vanilla' else None
    def get_target_tensor(self, prediction, target_is_real):
        return (self.real_label if target_is_real else self.fake_label).expand_as(prediction)
    def __call__(self, prediction, target_is_real):
        if self.gan_mode in ['lsgan', 'vanilla']: return self.loss(prediction, self.get_target_tensor(prediction, target_is_real))
        return -prediction.mean() if target_is_real else prediction.mean()
def cal_gradient_penalty(netD, real_data, fake_data, device, type='mixed', constant=1.0, lambda_gp=10.0):
    alpha = torch.rand(real_data.shape[0], 1)
    alpha = alpha.expand(real_data.shape[0], real_data.nelement() // real_data.shape[0]).contiguous().view(*real_data.shape)
    interpolatesv = alpha * real_data + ((1 - alpha) * fake_data); interpolatesv.requires_grad_(True)
    disc_interpolates = netD(interpolatesv)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolatesv, grad_outputs=torch.ones(disc_interpolates.size()).to(device),
                                    create_graph=True, retain_graph=True, only_inputs=True)
    gradients = gradients[0].view(real_data.size(0), -1)
    gradient_penalty = (((gradients + 1e-16).norm(2, dim=1) - constant) ** 2).mean() * lambda_gp
    return gradient_penalty, gradients
class ResnetBlock(nn.Module):
    def __init__(self, dim, padding_type, norm_layer, use_dropout, use_bias):
        super(ResnetBlock, self).__init__()
        cb = []; p = 0
        pad = {'reflect': nn.ReflectionPad2d, 'replicate': nn.ReplicationPad2d}
        if padding_type in pad: cb += [pad[padding_type](1)]
        else: p = 1
        cb += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim), nn.ReLU(True)]
        if use_dropout: cb += [nn.Dropout(0.5)]
        if padding_type in pad: cb += [pad[padding_type](1)]
        cb += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim)]
        self.conv_block = nn.Sequential(*cb)
    def forward(self, x): return x + self.conv_block(x)
class ResnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, ngf=64, norm_layer=nn.BatchNorm2d, use_dropout=False, n_blocks=6, padding_type='reflect'):
        super(ResnetGenerator, self).__init__()
        use_bias = norm_layer.func == nn.InstanceNorm2d if type(norm_layer) == functools.partial else norm_layer == nn.InstanceNorm2d
        model = [nn.ReflectionPad2d(3), nn.Conv2d(input_nc, ngf, kernel_size=7, padding=0, bias=use_bias), norm_layer(ngf), nn.ReLU(True)]
        for i in range(2):
            mult = 2 ** i
            model += [nn.Conv2d(ngf * mult, ngf * mult * 2, kernel_size=3, stride=2, padding=1, bias=use_bias), norm_layer(ngf * mult * 2), nn.ReLU(True)]
        for i in range(n_blocks):
            model += [ResnetBlock(ngf * 4, padding_type=padding_type, norm_layer=norm_layer, use_dropout=use_dropout, use_bias=use_bias)]
        for i in range(2):
            mult = 2 ** (2 - i)
            model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), kernel_size=3, stride=2, padding=1, output_padding=1, bias=use_bias),
                      norm_layer(int(ngf * mult / 2)), nn.ReLU(True)]
        model += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, output_nc, kernel_size=7, padding=0), nn.Tanh()]
        self.model = nn.Sequential(*model)
    def forward(self, input): return self.model(input)
class UnetSkipConnectionBlock(nn.Module):
    def __init__(self, outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False, innermost=False, norm_layer=nn.BatchNorm2d, use_dropout=False):
        super(UnetSkipConnectionBlock, self).__init__()
        self.outermost = outermost
        use_bias = norm_layer.func == nn.InstanceNorm2d if type(norm_layer) == functools.partial else norm_layer == nn.InstanceNorm2d
        input_nc = outer_nc if input_nc is None else input_nc
        downconv = nn.Conv2d(input_nc, inner_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
        downrelu = nn.LeakyReLU(0.2, True); downnorm = norm_layer(inner_nc); uprelu = nn.ReLU(True); upnorm = norm_layer(outer_nc)
        if outermost:
            model = [downconv, submodule, uprelu, nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1), nn.Tanh()]
        elif innermost:
            model = [downrelu, downconv, uprelu, nn.ConvTranspose2d(inner_nc, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias), upnorm]
        else:
            model = [downrelu, downconv, downnorm, submodule, uprelu,
                     nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias), upnorm]
            if use_dropout: model += [nn.Dropout(0.5)]
        self.model = nn.Sequential(*model)
    def forward(self, x): return self.model(x) if self.outermost else torch.cat([x, self.model(x)], 1)
class UnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, num_downs, ngf=64, norm_layer=nn.BatchNorm2d, use_dropout=False):
        super(UnetGenerator, self).__init__()
        b = UnetSkipConnectionBlock(ngf * 8, ngf * 8, submodule=None, norm_layer=norm_layer, innermost=True)
        for i in range(num_downs - 5): b = UnetSkipConnectionBlock(ngf * 8, ngf * 8, submodule=b, norm_layer=norm_layer, use_dropout=use_dropout)
        b = UnetSkipConnectionBlock(ngf * 4, ngf * 8, submodule=b, norm_layer=norm_layer)
        b = UnetSkipConnectionBlock(ngf * 2, ngf * 4, submodule=b, norm_layer=norm_layer)
        b = UnetSkipConnectionBlock(ngf, ngf * 2, submodule=b, norm_layer=norm_layer)
        self.model = UnetSkipConnectionBlock(output_nc, ngf, input_nc=input_nc, submodule=b, outermost=True, norm_layer=norm_layer)
    def forward(self, input): return self.model(input)
class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc, ndf=64, n_layers=3, norm_layer=nn.BatchNorm2d):
        super(NLayerDiscriminator, self).__init__()
        use_bias = norm_layer.func == nn.InstanceNorm2d if type(norm_layer) == functools.partial else norm_layer == nn.InstanceNorm2d
        seq = [nn.Conv2d(input_nc, ndf, kernel_size=4, stride=2, padding=1), nn.LeakyReLU(0.2, True)]
        nf_mult = 1
        for n in range(1, n_layers):
            nf_mult_prev, nf_mult = nf_mult, min(2 ** n, 8)
            seq += [nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=4, stride=2, padding=1, bias=use_bias), norm_layer(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        nf_mult_prev, nf_mult = nf_mult, min(2 ** n_layers, 8)
        seq += [nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=4, stride=1, padding=1, bias=use_bias), norm_layer(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        seq += [nn.Conv2d(ndf * nf_mult, 1, kernel_size=4, stride=1, padding=1)]
        self.model = nn.Sequential(*seq)
    def forward(self, input): return self.model(input)
torch.manual_seed(0)
opt = types.SimpleNamespace(lr_policy='linear', epoch_count=1, n_epochs=2, n_epochs_decay=2, lr_decay_iters=1)
for norm, gan_mode, init_type in [('instance', 'lsgan', 'normal'), ('batch', 'vanilla', 'xavier'), ('batch', 'wgangp', 'orthogonal')]:
    nl = get_norm_layer(norm)
    G = ResnetGenerator(3, 3, 8, norm_layer=nl, use_dropout=True, n_blocks=2); init_weights(G, init_type)
    D = NLayerDiscriminator(3, 8, 3, norm_layer=nl); init_weights(D, 'kaiming' if init_type == 'orthogonal' else init_type)
    crit = GANLoss(gan_mode); L1 = nn.L1Loss()
    oG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999)); oD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    sch = [get_scheduler(oG, opt), get_scheduler(oD, types.SimpleNamespace(lr_policy='cosine', n_epochs=3))]
    for ep in range(3):
        A, B = torch.rand(2, 3, 32, 32) * 2 - 1, torch.rand(2, 3, 32, 32) * 2 - 1
        fake = G(A)
        oD.zero_grad()
        lD = (crit(D(B), True) + crit(D(fake.detach()), False)) * 0.5
        if gan_mode == 'wgangp': lD = lD + cal_gradient_penalty(D, B, fake.detach(), 'cpu')[0]
        lD.backward(); oD.step()
        oG.zero_grad(); lG = crit(D(fake), True) + L1(fake, B) * 10; lG.backward(); oG.step()
        for s in sch: s.step()
        print(norm, gan_mode, 'ep', ep, 'D %.6f G %.6f lr %.3e %.3e' % (lD.item(), lG.item(), oG.param_groups[0]['lr'], oD.param_groups[0]['lr']))
P = UnetGenerator(3, 3, 6, 4, norm_layer=get_norm_layer('batch'), use_dropout=True); init_weights(P, 'normal')
oP = torch.optim.Adam(P.parameters(), lr=2e-4, betas=(0.5, 0.999)); pl = get_scheduler(oP, types.SimpleNamespace(lr_policy='plateau'))
for it in range(3):
    A = torch.rand(2, 3, 64, 64); out = P(A); l = nn.L1Loss()(out, A); oP.zero_grad(); l.backward(); oP.step(); pl.step(l.item())
    print('unet', it, '%.6f' % l.item(), tuple(out.shape))
P.eval(); print('eval', P(torch.rand(1, 3, 64, 64)).sum().item())
print(get_norm_layer('instance')(4))
