"""A small DCGAN (pytorch/examples' networks and training step) on random
images; prints losses. Usage: dcgan_small.py cthtorch|torch"""
import sys, importlib
torch = importlib.import_module(sys.argv[1]); nn = torch.nn; optim = torch.optim
torch.manual_seed(999)
nz, ngf, ndf, nc = 16, 8, 8, 3
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02); m.bias.data.fill_(0)
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())
    def forward(self, input): return self.main(input)
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    def forward(self, input): return self.main(input)
netG = Generator(); netG.apply(weights_init); netD = Discriminator(); netD.apply(weights_init)
criterion = nn.BCELoss(); fixed_noise = torch.randn(8, nz, 1, 1)
real_label, fake_label = 1., 0.
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999)); optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
data = torch.rand(64, nc, 32, 32) * 2 - 1
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=16, shuffle=True)
for epoch in range(2):
    for i, (real_cpu,) in enumerate(loader):
        netD.zero_grad(); b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float)
        output = netD(real_cpu).view(-1); errD_real = criterion(output, label); errD_real.backward(); D_x = output.mean().item()
        noise = torch.randn(b_size, nz, 1, 1); fake = netG(noise); label.fill_(fake_label)
        output = netD(fake.detach()).view(-1); errD_fake = criterion(output, label); errD_fake.backward()
        D_G_z1 = output.mean().item(); errD = errD_real + errD_fake; optimizerD.step()
        netG.zero_grad(); label.fill_(real_label); output = netD(fake).view(-1); errG = criterion(output, label); errG.backward()
        D_G_z2 = output.mean().item(); optimizerG.step()
    print('[%d] Loss_D: %.6f Loss_G: %.6f D(x): %.6f D(G(z)): %.6f / %.6f' % (epoch, errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
with torch.no_grad(): print(netG(fixed_noise).detach().sum().item())
