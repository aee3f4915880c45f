# Adapted from eriklindernoren/PyTorch-GAN, implementations/gan/gan.py (MIT License,
# Copyright (c) 2018 Erik Linder-Norén): the same networks, losses and training step on
# random "images" instead of MNIST, smaller layers; prints the losses.
# Usage: pytorch_gan_small.py cthtorch|torch
import sys, importlib
import numpy as np
torch = importlib.import_module(sys.argv[1])
nn = torch.nn
Variable = torch.autograd.Variable
torch.manual_seed(0)
np.random.seed(0)
latent_dim, img_shape = 16, (1, 8, 8)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()

        def block(in_feat, out_feat, normalize=True):
            layers = [nn.Linear(in_feat, out_feat)]
            if normalize:
                layers.append(nn.BatchNorm1d(out_feat, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        self.model = nn.Sequential(*block(latent_dim, 32, normalize=False), *block(32, 64),
                                   nn.Linear(64, int(np.prod(img_shape))), nn.Tanh())

    def forward(self, z):
        img = self.model(z)
        return img.view(img.size(0), *img_shape)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.model = nn.Sequential(nn.Linear(int(np.prod(img_shape)), 32), nn.LeakyReLU(0.2, inplace=True),
                                   nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, img):
        return self.model(img.view(img.size(0), -1))


adversarial_loss = torch.nn.BCELoss()
generator, discriminator = Generator(), Discriminator()
data = torch.utils.data.TensorDataset(torch.rand(64, *img_shape, dtype=torch.float64) * 2 - 1, torch.zeros(64))
dataloader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
optimizer_G = torch.optim.Adam(generator.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=0.0002, betas=(0.5, 0.999))
cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
AnyTensor = torch.cuda.FloatTensor if cuda else torch.Tensor   # cyclegan/srgan's spelling

for epoch in range(2):
    for i, (imgs, _) in enumerate(dataloader):
        valid = Variable(Tensor(imgs.size(0), 1).fill_(1.0), requires_grad=False)
        fake = Variable(Tensor(imgs.size(0), 1).fill_(0.0), requires_grad=False)
        real_imgs = Variable(imgs.type(AnyTensor))
        optimizer_G.zero_grad()
        z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], latent_dim))))
        gen_imgs = generator(z)
        g_loss = adversarial_loss(discriminator(gen_imgs), valid)
        g_loss.backward()
        optimizer_G.step()
        optimizer_D.zero_grad()
        real_loss = adversarial_loss(discriminator(real_imgs), valid)
        fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
        d_loss = (real_loss + fake_loss) / 2
        d_loss.backward()
        optimizer_D.step()
        print("[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f] %s" % (
            epoch, 2, i, len(dataloader), d_loss.item(), g_loss.item(), real_imgs.type()))
