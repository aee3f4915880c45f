"""Audio without torchaudio, in small: the pytorch/tutorials speech-command tutorial's M5 model
(intermediate/speech_command_classification_with_torchaudio_tutorial.py, BSD 3-Clause License, Copyright (c)
2017-2022 PyTorch contributors) with its pad_sequence collate, label helpers, Adam + StepLR and
number_of_correct, trained two epochs on seeded synthetic waveforms; before it the front end such scripts write
by hand: hann/hamming/blackman/bartlett/kaiser windows, torch.stft(return_complex=True) and istft, a mel
filterbank (torchaudio's melscale_fbanks formula), log-mel with clamp/log10, a DCT for MFCCs, pre-emphasis
framing with unfold and torch.fft.rfft. Prints the losses, accuracies and spectral statistics.
Usage: m5_audio_small.py cthtorch|torch"""
import importlib
import math
import sys
import warnings

torch = importlib.import_module(sys.argv[1])
nn, F = torch.nn, torch.nn.functional
warnings.simplefilter("ignore")
torch.manual_seed(0)
torch.set_printoptions(precision=6)
sr = 8000
t = torch.arange(0, 4000) / sr
wav = torch.sin(2 * math.pi * 440 * t) + 0.1 * torch.randn(4000)
n_fft, hop = 256, 64
win = torch.hann_window(n_fft)
print(win[:4], win.dtype, torch.hann_window(8, periodic=False))
print(torch.hamming_window(8), torch.blackman_window(8), torch.bartlett_window(8), torch.kaiser_window(8))
spec = torch.stft(wav, n_fft=n_fft, hop_length=hop, win_length=n_fft, window=win, center=True,
                  pad_mode='reflect', normalized=False, onesided=True, return_complex=True)
print(spec.shape, spec.dtype)
mag = spec.abs().pow(2)
print(mag.sum().item())
print(spec.real.shape, spec.imag.abs().mean().item(), spec.real.sum().item())
rec = torch.istft(spec, n_fft=n_fft, hop_length=hop, win_length=n_fft, window=win, length=wav.shape[-1])
print((rec - wav).abs().max() < 1e-4)
b = torch.stft(wav.repeat(2, 1), 128, hop_length=32, window=torch.hann_window(128), return_complex=True)
print(b.shape)
sr2 = torch.view_as_real(b)
print(sr2.shape)
# mel filterbank (librosa/htk style) by hand
def hz_to_mel(f): return 2595.0 * torch.log10(1.0 + f / 700.0)
def mel_to_hz(m): return 700.0 * (10 ** (m / 2595.0) - 1.0)
def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate):
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min = hz_to_mel(torch.tensor(f_min)); m_max = hz_to_mel(torch.tensor(float(f_max)))
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = mel_to_hz(m_pts)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = torch.max(torch.zeros(1), torch.min(down, up))
    return fb
fb = melscale_fbanks(n_fft // 2 + 1, 0., sr / 2, 40, sr)
mel = torch.matmul(mag.transpose(-1, -2), fb).transpose(-1, -2)
logmel = torch.log10(torch.clamp(mel, min=1e-10))
logmel = torch.maximum(logmel, logmel.max() - 8.0)
logmel = (logmel + 4.0) / 4.0
print(fb.shape, logmel.shape, logmel.mean().item(), logmel.std().item(), fb.sum().item())
db = 10.0 * torch.log10(torch.clamp(mel, min=1e-10)) - 10 * math.log10(max(1e-10, 1.0))
print(db.amax(dim=(-2, -1)))
# dct for mfcc
n = torch.arange(40, dtype=torch.float)
k = torch.arange(13, dtype=torch.float).unsqueeze(1)
dct = torch.cos(math.pi / 40 * (n + 0.5) * k)
dct[0] *= 1.0 / math.sqrt(2.0)
dct *= math.sqrt(2.0 / 40)
mfcc = torch.matmul(db.transpose(-1, -2), dct.t()).transpose(-1, -2)
print(mfcc.shape, mfcc[:, 0])
# preemphasis + frames via unfold
pre = torch.cat([wav[:1], wav[1:] - 0.97 * wav[:-1]])
frames = pre.unfold(0, 200, 80)
print(frames.shape, torch.fft.rfft(frames * torch.hamming_window(200), n=256).abs().mean())
print(torch.fft.rfftfreq(256, 1 / sr)[:4], torch.fft.fftfreq(8))
print(torch.fft.irfft(torch.fft.rfft(wav[:64]), n=64).sub(wav[:64]).abs().max() < 1e-5)

class M5(nn.Module):
    def __init__(self, n_input=1, n_output=35, stride=16, n_channel=32):
        super().__init__()
        self.conv1 = nn.Conv1d(n_input, n_channel, kernel_size=80, stride=stride)
        self.bn1 = nn.BatchNorm1d(n_channel)
        self.pool1 = nn.MaxPool1d(4)
        self.conv2 = nn.Conv1d(n_channel, n_channel, kernel_size=3)
        self.bn2 = nn.BatchNorm1d(n_channel)
        self.pool2 = nn.MaxPool1d(4)
        self.conv3 = nn.Conv1d(n_channel, 2 * n_channel, kernel_size=3)
        self.bn3 = nn.BatchNorm1d(2 * n_channel)
        self.pool3 = nn.MaxPool1d(4)
        self.conv4 = nn.Conv1d(2 * n_channel, 2 * n_channel, kernel_size=3)
        self.bn4 = nn.BatchNorm1d(2 * n_channel)
        self.pool4 = nn.MaxPool1d(4)
        self.fc1 = nn.Linear(2 * n_channel, n_output)
    def forward(self, x):
        x = self.conv1(x); x = F.relu(self.bn1(x)); x = self.pool1(x)
        x = self.conv2(x); x = F.relu(self.bn2(x)); x = self.pool2(x)
        x = self.conv3(x); x = F.relu(self.bn3(x)); x = self.pool3(x)
        x = self.conv4(x); x = F.relu(self.bn4(x)); x = self.pool4(x)
        x = F.avg_pool1d(x, x.shape[-1])
        x = x.permute(0, 2, 1)
        x = self.fc1(x)
        return F.log_softmax(x, dim=2)

labels = ['yes', 'no', 'up', 'down', 'left']
def label_to_index(word): return torch.tensor(labels.index(word))
def index_to_label(index): return labels[index]
def pad_sequence(batch):
    batch = [item.t() for item in batch]
    batch = torch.nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=0.)
    return batch.permute(0, 2, 1)
def collate_fn(batch):
    tensors, targets = [], []
    for waveform, label in batch:
        tensors += [waveform]; targets += [label_to_index(label)]
    tensors = pad_sequence(tensors)
    targets = torch.stack(targets)
    return tensors, targets
data = [(torch.randn(1, 8000 - 100 * (i % 3)), labels[i % 5]) for i in range(40)]
loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True, collate_fn=collate_fn,
                                     num_workers=0, pin_memory=False)
model = M5(n_input=1, n_output=len(labels))
print(model)
def count_parameters(model): return sum(p.numel() for p in model.parameters() if p.requires_grad)
print("Number of parameters: %s" % count_parameters(model))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.0001)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.1)
def number_of_correct(pred, target): return pred.squeeze().eq(target).sum().item()
def get_likely_index(tensor): return tensor.argmax(dim=-1)
for epoch in range(1, 3):
    model.train()
    for batch_idx, (d, target) in enumerate(loader):
        output = model(d)
        loss = F.nll_loss(output.squeeze(), target)
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        if batch_idx % 2 == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(d)}/{len(loader.dataset)} ({100. * batch_idx / len(loader):.0f}%)]\tLoss: {loss.item():.6f}")
    scheduler.step()
    model.eval(); correct = 0
    for d, target in loader:
        output = model(d)
        pred = get_likely_index(output)
        correct += number_of_correct(pred, target)
    print(f"\nTest Epoch: {epoch}\tAccuracy: {correct}/{len(loader.dataset)} ({100. * correct / len(loader.dataset):.0f}%)\n")
def predict(tensor):
    tensor = model(tensor.unsqueeze(0))
    tensor = get_likely_index(tensor)
    return index_to_label(tensor.squeeze())
print(predict(data[0][0]))
# resample by hand via interpolate
print(F.interpolate(wav.view(1, 1, -1), scale_factor=0.5, mode='linear', align_corners=False).shape)
