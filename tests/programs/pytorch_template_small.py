# Condensed from victoresque/pytorch-template (MIT License, Copyright (c) 2018 Victor Huang):
# base/base_data_loader.py, base/base_model.py, base/base_trainer.py, trainer/trainer.py, model/model.py,
# model/loss.py, model/metric.py, utils/util.py (MetricTracker without pandas), logger/visualization.py,
# parse_config.py and train.py, on synthetic MNIST-shaped data; a run of 3 epochs saves checkpoints, a
# second run resumes from epoch 2 with the optimizer's state. Usage: pytorch_template_small.py cthtorch|torch
import json, os, sys, tempfile, logging
from abc import abstractmethod
from collections import OrderedDict
from functools import reduce, partial
from operator import getitem
from pathlib import Path
import importlib
import numpy as np
torch = importlib.import_module(sys.argv[1])
nn, F = torch.nn, torch.nn.functional
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
default_collate = importlib.import_module(sys.argv[1] + ".utils.data.dataloader").default_collate
SubsetRandomSampler = importlib.import_module(sys.argv[1] + ".utils.data.sampler").SubsetRandomSampler
make_grid = None   # torchvision.utils.make_grid: the images logged to TensorBoard are left out here
from numpy import inf

SEED = 123
torch.manual_seed(SEED)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
np.random.seed(SEED)

class BaseDataLoader(DataLoader):
    def __init__(self, dataset, batch_size, shuffle, validation_split, num_workers, collate_fn=default_collate):
        self.validation_split = validation_split
        self.shuffle = shuffle
        self.batch_idx = 0
        self.n_samples = len(dataset)
        self.sampler, self.valid_sampler = self._split_sampler(self.validation_split)
        self.init_kwargs = {'dataset': dataset, 'batch_size': batch_size, 'shuffle': self.shuffle,
                            'collate_fn': collate_fn, 'num_workers': num_workers}
        super().__init__(sampler=self.sampler, **self.init_kwargs)

    def _split_sampler(self, split):
        if split == 0.0:
            return None, None
        idx_full = np.arange(self.n_samples)
        np.random.seed(0)
        np.random.shuffle(idx_full)
        if isinstance(split, int):
            assert split > 0
            assert split < self.n_samples, "validation set size is configured to be larger than entire dataset."
            len_valid = split
        else:
            len_valid = int(self.n_samples * split)
        valid_idx = idx_full[0:len_valid]
        train_idx = np.delete(idx_full, np.arange(0, len_valid))
        train_sampler = SubsetRandomSampler(train_idx)
        valid_sampler = SubsetRandomSampler(valid_idx)
        self.shuffle = False
        self.n_samples = len(train_idx)
        return train_sampler, valid_sampler

    def split_validation(self):
        if self.valid_sampler is None:
            return None
        return DataLoader(sampler=self.valid_sampler, **self.init_kwargs)

class BaseModel(nn.Module):
    @abstractmethod
    def forward(self, *inputs):
        raise NotImplementedError
    def __str__(self):
        model_parameters = filter(lambda p: p.requires_grad, self.parameters())
        params = sum([np.prod(p.size()) for p in model_parameters])
        return super().__str__() + '\nTrainable parameters: {}'.format(params)

class MnistModel(BaseModel):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, num_classes)
    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)

def nll_loss(output, target):
    return F.nll_loss(output, target)

def accuracy(output, target):
    with torch.no_grad():
        pred = torch.argmax(output, dim=1)
        assert pred.shape[0] == len(target)
        correct = 0
        correct += torch.sum(pred == target).item()
    return correct / len(target)

def top_k_acc(output, target, k=3):
    with torch.no_grad():
        pred = torch.topk(output, k, dim=1)[1]
        assert pred.shape[0] == len(target)
        correct = 0
        for i in range(k):
            correct += torch.sum(pred[:, i] == target).item()
    return correct / len(target)

class MetricTracker:
    # the template keeps a pandas DataFrame; same bookkeeping with dicts
    def __init__(self, *keys, writer=None):
        self.writer = writer
        self._data = {k: [0.0, 0, 0.0] for k in keys}
        self.reset()
    def reset(self):
        for k in self._data:
            self._data[k] = [0.0, 0, 0.0]
    def update(self, key, value, n=1):
        if self.writer is not None:
            self.writer.add_scalar(key, value)
        d = self._data[key]
        d[0] += value * n; d[1] += n; d[2] = d[0] / d[1]
    def avg(self, key):
        return self._data[key][2]
    def result(self):
        return {k: v[2] for k, v in self._data.items()}

class TensorboardWriter():
    def __init__(self, log_dir, logger, enabled):
        self.writer = None
        self.selected_module = ""
        if enabled:
            log_dir = str(log_dir)
            succeeded = False
            for module in [sys.argv[1] + ".utils.tensorboard", "tensorboardX"]:
                try:
                    self.writer = importlib.import_module(module).SummaryWriter(log_dir)
                    succeeded = True
                    break
                except ImportError:
                    succeeded = False
                self.selected_module = module
            if not succeeded:
                print("Warning: Visualization (Tensorboard) is configured to use, but currently not installed")
        self.step = 0
        self.mode = ''
        self.tb_writer_ftns = {'add_scalar', 'add_scalars', 'add_image', 'add_images', 'add_audio',
                               'add_text', 'add_histogram', 'add_pr_curve', 'add_embedding'}
        self.tag_mode_exceptions = {'add_histogram', 'add_embedding'}
    def set_step(self, step, mode='train'):
        self.mode = mode
        self.step = step
    def __getattr__(self, name):
        if name in self.tb_writer_ftns:
            add_data = getattr(self.writer, name, None)
            def wrapper(tag, data, *args, **kwargs):
                if add_data is not None:
                    if name not in self.tag_mode_exceptions:
                        tag = '{}/{}'.format(tag, self.mode)
                    add_data(tag, data, self.step, *args, **kwargs)
            return wrapper
        else:
            try:
                attr = object.__getattr__(name)
            except AttributeError:
                raise AttributeError("type object '{}' has no attribute '{}'".format(self.selected_module, name))
            return attr

def inf_loop(data_loader):
    from itertools import repeat
    for loader in repeat(data_loader):
        yield from loader

class ConfigParser:
    def __init__(self, config, resume=None, modification=None, run_id=None, save_root=None):
        self._config = _update_config(config, modification)
        self.resume = resume
        save_dir = Path(save_root)
        exper_name = self.config['name']
        if run_id is None:
            run_id = 'run'
        self._save_dir = save_dir / 'models' / exper_name / run_id
        self._log_dir = save_dir / 'log' / exper_name / run_id
        exist_ok = run_id == ''
        self.save_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.save_dir / 'config.json', 'wt') as handle:
            json.dump(self.config, handle, indent=4, sort_keys=False)
        self.log_levels = {0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}
    def init_obj(self, name, module, *args, **kwargs):
        module_name = self[name]['type']
        module_args = dict(self[name]['args'])
        assert all([k not in module_args for k in kwargs]), 'Overwriting kwargs given in config file is not allowed'
        module_args.update(kwargs)
        return getattr(module, module_name)(*args, **module_args)
    def init_ftn(self, name, module, *args, **kwargs):
        module_name = self[name]['type']
        module_args = dict(self[name]['args'])
        module_args.update(kwargs)
        return partial(getattr(module, module_name), *args, **module_args)
    def __getitem__(self, name):
        return self.config[name]
    def get_logger(self, name, verbosity=2):
        logger = logging.getLogger(name)
        logger.setLevel(self.log_levels[verbosity])
        return logger
    @property
    def config(self):
        return self._config
    @property
    def save_dir(self):
        return self._save_dir
    @property
    def log_dir(self):
        return self._log_dir

def _update_config(config, modification):
    if modification is None:
        return config
    for k, v in modification.items():
        if v is not None:
            _set_by_path(config, k, v)
    return config
def _set_by_path(tree, keys, value):
    keys = keys.split(';')
    _get_by_path(tree, keys[:-1])[keys[-1]] = value
def _get_by_path(tree, keys):
    return reduce(getitem, keys, tree)

class BaseTrainer:
    def __init__(self, model, criterion, metric_ftns, optimizer, config):
        self.config = config
        self.logger = config.get_logger('trainer', config['trainer']['verbosity'])
        self.model = model
        self.criterion = criterion
        self.metric_ftns = metric_ftns
        self.optimizer = optimizer
        cfg_trainer = config['trainer']
        self.epochs = cfg_trainer['epochs']
        self.save_period = cfg_trainer['save_period']
        self.monitor = cfg_trainer.get('monitor', 'off')
        if self.monitor == 'off':
            self.mnt_mode = 'off'
            self.mnt_best = 0
        else:
            self.mnt_mode, self.mnt_metric = self.monitor.split()
            assert self.mnt_mode in ['min', 'max']
            self.mnt_best = inf if self.mnt_mode == 'min' else -inf
            self.early_stop = cfg_trainer.get('early_stop', inf)
            if self.early_stop <= 0:
                self.early_stop = inf
        self.start_epoch = 1
        self.checkpoint_dir = config.save_dir
        self.writer = TensorboardWriter(config.log_dir, self.logger, cfg_trainer['tensorboard'])
        if config.resume is not None:
            self._resume_checkpoint(config.resume)

    @abstractmethod
    def _train_epoch(self, epoch):
        raise NotImplementedError

    def train(self):
        not_improved_count = 0
        for epoch in range(self.start_epoch, self.epochs + 1):
            result = self._train_epoch(epoch)
            log = {'epoch': epoch}
            log.update(result)
            for key, value in log.items():
                print('    {:15s}: {}'.format(str(key), value))
            best = False
            if self.mnt_mode != 'off':
                try:
                    improved = (self.mnt_mode == 'min' and log[self.mnt_metric] <= self.mnt_best) or \
                               (self.mnt_mode == 'max' and log[self.mnt_metric] >= self.mnt_best)
                except KeyError:
                    print("Warning: Metric '{}' is not found. Model performance monitoring is disabled.".format(self.mnt_metric))
                    self.mnt_mode = 'off'
                    improved = False
                if improved:
                    self.mnt_best = log[self.mnt_metric]
                    not_improved_count = 0
                    best = True
                else:
                    not_improved_count += 1
                if not_improved_count > self.early_stop:
                    print("Validation performance didn\'t improve for {} epochs. Training stops.".format(self.early_stop))
                    break
            if epoch % self.save_period == 0:
                self._save_checkpoint(epoch, save_best=best)

    def _save_checkpoint(self, epoch, save_best=False):
        arch = type(self.model).__name__
        state = {
            'arch': arch,
            'epoch': epoch,
            'state_dict': self.model.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'monitor_best': self.mnt_best,
            'config': self.config
        }
        filename = str(self.checkpoint_dir / 'checkpoint-epoch{}.pth'.format(epoch))
        torch.save(state, filename)
        print("Saving checkpoint: checkpoint-epoch{}.pth ...".format(epoch))
        if save_best:
            best_path = str(self.checkpoint_dir / 'model_best.pth')
            torch.save(state, best_path)
            print("Saving current best: model_best.pth ...")

    def _resume_checkpoint(self, resume_path):
        resume_path = str(resume_path)
        print("Loading checkpoint: {} ...".format(os.path.basename(resume_path)))
        checkpoint = torch.load(resume_path, weights_only=False)
        self.start_epoch = checkpoint['epoch'] + 1
        self.mnt_best = checkpoint['monitor_best']
        if checkpoint['config']['arch'] != self.config['arch']:
            print("Warning: Architecture configuration given in config file is different from that of checkpoint.")
        self.model.load_state_dict(checkpoint['state_dict'])
        if checkpoint['config']['optimizer']['type'] != self.config['optimizer']['type']:
            print("Warning: Optimizer type given in config file is different from that of checkpoint.")
        else:
            self.optimizer.load_state_dict(checkpoint['optimizer'])
        print("Checkpoint loaded. Resume training from epoch {}".format(self.start_epoch))

class Trainer(BaseTrainer):
    def __init__(self, model, criterion, metric_ftns, optimizer, config, device,
                 data_loader, valid_data_loader=None, lr_scheduler=None, len_epoch=None):
        super().__init__(model, criterion, metric_ftns, optimizer, config)
        self.config = config
        self.device = device
        self.data_loader = data_loader
        if len_epoch is None:
            self.len_epoch = len(self.data_loader)
        else:
            self.data_loader = inf_loop(data_loader)
            self.len_epoch = len_epoch
        self.valid_data_loader = valid_data_loader
        self.do_validation = self.valid_data_loader is not None
        self.lr_scheduler = lr_scheduler
        self.log_step = int(np.sqrt(data_loader.batch_size))
        self.train_metrics = MetricTracker('loss', *[m.__name__ for m in self.metric_ftns], writer=self.writer)
        self.valid_metrics = MetricTracker('loss', *[m.__name__ for m in self.metric_ftns], writer=self.writer)

    def _train_epoch(self, epoch):
        self.model.train()
        self.train_metrics.reset()
        for batch_idx, (data, target) in enumerate(self.data_loader):
            data, target = data.to(self.device), target.to(self.device)
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.criterion(output, target)
            loss.backward()
            self.optimizer.step()
            self.writer.set_step((epoch - 1) * self.len_epoch + batch_idx)
            self.train_metrics.update('loss', loss.item())
            for met in self.metric_ftns:
                self.train_metrics.update(met.__name__, met(output, target))
            if batch_idx % self.log_step == 0:
                print('Train Epoch: {} {} Loss: {:.6f}'.format(epoch, self._progress(batch_idx), loss.item()))
                if make_grid is not None: self.writer.add_image('input', make_grid(data.cpu(), nrow=8, normalize=True))
            if batch_idx == self.len_epoch:
                break
        log = self.train_metrics.result()
        if self.do_validation:
            val_log = self._valid_epoch(epoch)
            log.update(**{'val_'+k : v for k, v in val_log.items()})
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()
        return log

    def _valid_epoch(self, epoch):
        self.model.eval()
        self.valid_metrics.reset()
        with torch.no_grad():
            for batch_idx, (data, target) in enumerate(self.valid_data_loader):
                data, target = data.to(self.device), target.to(self.device)
                output = self.model(data)
                loss = self.criterion(output, target)
                self.writer.set_step((epoch - 1) * len(self.valid_data_loader) + batch_idx, 'valid')
                self.valid_metrics.update('loss', loss.item())
                for met in self.metric_ftns:
                    self.valid_metrics.update(met.__name__, met(output, target))
                if make_grid is not None: self.writer.add_image('input', make_grid(data.cpu(), nrow=8, normalize=True))
        for name, p in self.model.named_parameters():
            self.writer.add_histogram(name, p, bins='auto')
        return self.valid_metrics.result()

    def _progress(self, batch_idx):
        base = '[{}/{} ({:.0f}%)]'
        if hasattr(self.data_loader, 'n_samples'):
            current = batch_idx * self.data_loader.batch_size
            total = self.data_loader.n_samples
        else:
            current = batch_idx
            total = self.len_epoch
        return base.format(current, total, 100.0 * current / total)

def prepare_device(n_gpu_use):
    n_gpu = torch.cuda.device_count()
    if n_gpu_use > 0 and n_gpu == 0:
        print("Warning: There\'s no GPU available on this machine, training will be performed on CPU.")
        n_gpu_use = 0
    device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')
    list_ids = list(range(n_gpu_use))
    return device, list_ids

CONFIG = {
    "name": "Mnist_LeNet", "n_gpu": 1,
    "arch": {"type": "MnistModel", "args": {}},
    "data_loader": {"type": "MnistDataLoader", "args": {"batch_size": 16, "shuffle": True, "validation_split": 0.25, "num_workers": 0}},
    "optimizer": {"type": "Adam", "args": {"lr": 0.001, "weight_decay": 0, "amsgrad": True}},
    "loss": "nll_loss", "metrics": ["accuracy", "top_k_acc"],
    "lr_scheduler": {"type": "StepLR", "args": {"step_size": 2, "gamma": 0.1}},
    "trainer": {"epochs": 3, "save_dir": "saved/", "save_period": 1, "verbosity": 2,
                "monitor": "min val_loss", "early_stop": 10, "tensorboard": True}
}

def main(config, X, Y):
    g = torch.Generator().manual_seed(0)
    ds = TensorDataset(X, Y)
    data_loader = BaseDataLoader(ds, **config['data_loader']['args'])
    valid_data_loader = data_loader.split_validation()
    model = config.init_obj('arch', sys.modules[__name__])
    print(model)
    device, device_ids = prepare_device(config['n_gpu'])
    model = model.to(device)
    if len(device_ids) > 1:
        model = torch.nn.DataParallel(model, device_ids=device_ids)
    criterion = getattr(sys.modules[__name__], config['loss'])
    metrics = [getattr(sys.modules[__name__], met) for met in config['metrics']]
    trainable_params = filter(lambda p: p.requires_grad, model.parameters())
    optimizer = config.init_obj('optimizer', torch.optim, trainable_params)
    lr_scheduler = config.init_obj('lr_scheduler', torch.optim.lr_scheduler, optimizer)
    trainer = Trainer(model, criterion, metrics, optimizer, config=config, device=device,
                      data_loader=data_loader, valid_data_loader=valid_data_loader, lr_scheduler=lr_scheduler)
    trainer.train()
    return trainer

if __name__ == '__main__':
    X = torch.randn(96, 1, 28, 28)
    Y = torch.randint(0, 10, (96,))
    with tempfile.TemporaryDirectory() as d:
        import copy
        cfg = ConfigParser(copy.deepcopy(CONFIG), save_root=d, modification={'optimizer;args;lr': 0.002})
        t = main(cfg, X, Y)
        print(sorted(os.listdir(cfg.save_dir)))
        ckpt = cfg.save_dir / 'checkpoint-epoch2.pth'
        cfg2 = copy.deepcopy(CONFIG); cfg2['trainer']['epochs'] = 4
        cfg2 = ConfigParser(cfg2, resume=ckpt, save_root=d, run_id='resume')
        t2 = main(cfg2, X, Y)
        print(t2.optimizer.state_dict()['param_groups'][0]['lr'], t2.lr_scheduler.get_last_lr())
        print(sorted(os.listdir(cfg.log_dir))[:1] != [])
        st = t2.optimizer.state_dict()['state'][0]
        print(sorted(st.keys()), st['step'], st['max_exp_avg_sq'].shape)
