"""A small VAE (pytorch/examples' model) trained three epochs on random
images; prints the per-epoch loss. Usage: vae_small.py cthtorch|torch"""
import importlib
import sys
torch = importlib.import_module(sys.argv[1])
nn, optim, F = torch.nn, torch.optim, torch.nn.functional
torch.manual_seed(1)
class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(784, 400); self.fc21 = nn.Linear(400, 20); self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400); self.fc4 = nn.Linear(400, 784)
    def encode(self, x):
        h1 = F.relu(self.fc1(x)); return self.fc21(h1), self.fc22(h1)
    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5*logvar); eps = torch.randn_like(std); return mu + eps*std
    def decode(self, z):
        h3 = F.relu(self.fc3(z)); return torch.sigmoid(self.fc4(h3))
    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784)); z = self.reparameterize(mu, logvar); return self.decode(z), mu, logvar
model = VAE(); optimizer = optim.Adam(model.parameters(), lr=1e-3)
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()); return BCE + KLD
data = torch.rand(256, 1, 28, 28)
for epoch in range(3):
    model.train(); train_loss = 0
    for i in range(0, 256, 64):
        x = data[i:i+64]; optimizer.zero_grad(); recon, mu, logvar = model(x)
        loss = loss_function(recon, x, mu, logvar); loss.backward(); train_loss += loss.item(); optimizer.step()
    print('epoch', epoch, train_loss / 256)
