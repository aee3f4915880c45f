"""pytorch/tutorials' character-level RNN name classifier (intermediate_source/char_rnn_classification_tutorial,
BSD-3-Clause) in small and in its older style: Variable, LongTensor, one-hot letters written by indexing, an
i2h/i2o cell with LogSoftmax, hand SGD through the deprecated p.data.add_(-lr, p.grad.data), topk guesses and a
confusion matrix; seeded synthetic names of three "languages" instead of the data download. Prints losses,
guesses and the confusion matrix. Usage: char_rnn_classify_small.py cthtorch|torch"""
import importlib
import random
import string
import sys
import warnings

torch = importlib.import_module(sys.argv[1])
nn = torch.nn
Variable = importlib.import_module(sys.argv[1] + ".autograd").Variable
warnings.simplefilter("ignore")

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
random.seed(1)
category_lines = {lang: [''.join(random.choice(letters) for _ in range(random.randint(3, 8))).capitalize()
                         for _ in range(50)]
                  for lang, letters in [("Italian", "aeiourltnc"), ("German", "schrnbtmek"), ("Japanese", "kaoitmnusy")]}
all_categories = list(category_lines)
n_categories = len(all_categories)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][all_letters.find(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        return self.softmax(self.i2o(combined)), self.i2h(combined)

    def initHidden(self):
        return Variable(torch.zeros(1, self.hidden_size))


torch.manual_seed(0)
rnn = RNN(n_letters, 64, n_categories)
criterion = nn.NLLLoss()


def categoryFromOutput(output):
    top_n, top_i = output.data.topk(1)
    return all_categories[top_i[0][0]], top_i[0][0].item()


def randomTrainingExample():
    category = random.choice(all_categories)
    line = random.choice(category_lines[category])
    return category, line, Variable(torch.LongTensor([all_categories.index(category)])), Variable(lineToTensor(line))


def evaluate(line_tensor):
    hidden = rnn.initHidden()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    return output


for it in range(1, 401):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    rnn.zero_grad()
    output = evaluate(line_tensor)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(-0.005, p.grad.data)
    if it % 50 == 0:
        guess, _ = categoryFromOutput(output)
        print('%d %.4f %s / %s %s' % (it, loss.item(), line, guess, guess == category))

confusion = torch.zeros(n_categories, n_categories)
for i in range(100):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    guess, guess_i = categoryFromOutput(evaluate(line_tensor))
    confusion[all_categories.index(category)][guess_i] += 1
for i in range(n_categories):
    confusion[i] = confusion[i] / confusion[i].sum()
print(confusion)
topv, topi = evaluate(Variable(lineToTensor('Satoshi'))).data.topk(3, 1, True)
for i in range(3):
    print('(%.2f) %s' % (topv[0][i], all_categories[topi[0][i]]))
