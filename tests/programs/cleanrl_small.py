"""vwxyzjn/cleanrl (MIT License, Copyright (c) 2019 CleanRL developers), condensed update code of
ppo.py (layer_init with orthogonal_ and a numpy gain, Categorical agent, annealed lr through
param_groups, GAE loop, minibatch epochs over a shuffled numpy index, clipped value loss, approx_kl,
clipfrac, clip_grad_norm_, explained variance), dqn.py (linear epsilon schedule, argmax actions,
max(dim=1) TD target, gather, target network copy_ and state_dict save/load) and
sac_continuous_action.py (tanh-squashed Normal rsample with action_scale buffers, twin soft Q,
autotuned log_alpha, polyak copy_), on a seeded synthetic vector environment in place of gym.
Prints the losses and statistics of each update. Usage: cleanrl_small.py cthtorch|torch"""
import importlib
import io
import random
import sys
from dataclasses import dataclass
import numpy as np
torch = importlib.import_module(sys.argv[1])
nn, F, optim = torch.nn, torch.nn.functional, torch.optim
Categorical = torch.distributions.categorical.Categorical
class Box:
    def __init__(self, low, high, shape):
        self.low = np.full(shape, low, dtype=np.float32); self.high = np.full(shape, high, dtype=np.float32); self.shape = shape
class Discrete:
    def __init__(self, n): self.n = n; self.shape = ()
class SyncVectorEnv:
    def __init__(self, num_envs, obs_dim, discrete=True, seed=0):
        self.num_envs = num_envs
        self.single_observation_space = Box(-np.inf, np.inf, (obs_dim,))
        self.single_action_space = Discrete(2) if discrete else Box(-1.0, 1.0, (2,))
        self.rng = np.random.RandomState(seed); self.t = np.zeros(num_envs, dtype=np.int64)
    def reset(self, seed=None):
        self.obs = self.rng.randn(self.num_envs, self.single_observation_space.shape[0]).astype(np.float32)
        return self.obs, {}
    def step(self, action):
        a = np.asarray(action, dtype=np.float32).reshape(self.num_envs, -1)
        self.obs = (np.tanh(self.obs * 0.9 + a.mean(1, keepdims=True) * 0.1) + 0.05 * self.rng.randn(*self.obs.shape)).astype(np.float32)
        rew = -np.square(self.obs).sum(1).astype(np.float32)
        self.t += 1
        term = self.t % 7 == 0; trunc = np.zeros(self.num_envs, dtype=bool)
        return self.obs, rew, term, trunc, {}

def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer

class Agent(nn.Module):
    def __init__(self, envs):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 16)), nn.Tanh(),
            layer_init(nn.Linear(16, 16)), nn.Tanh(), layer_init(nn.Linear(16, 1), std=1.0))
        self.actor = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 16)), nn.Tanh(),
            layer_init(nn.Linear(16, 16)), nn.Tanh(), layer_init(nn.Linear(16, envs.single_action_space.n), std=0.01))
    def get_value(self, x): return self.critic(x)
    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None: action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)

@dataclass
class Args:
    seed: int = 1
    torch_deterministic: bool = True
    cuda: bool = True
    learning_rate: float = 2.5e-4
    num_envs: int = 4
    num_steps: int = 16
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float = None
    total_timesteps: int = 192
    batch_size: int = 0
    minibatch_size: int = 0
    num_iterations: int = 0

def ppo():
    args = Args()
    args.batch_size = int(args.num_envs * args.num_steps)
    args.minibatch_size = int(args.batch_size // args.num_minibatches)
    args.num_iterations = args.total_timesteps // args.batch_size
    random.seed(args.seed); np.random.seed(args.seed); torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
    envs = SyncVectorEnv(args.num_envs, 4)
    assert isinstance(envs.single_action_space, Discrete), "only discrete action space is supported"
    agent = Agent(envs).to(device)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    obs = torch.zeros((args.num_steps, args.num_envs) + envs.single_observation_space.shape).to(device)
    actions = torch.zeros((args.num_steps, args.num_envs) + envs.single_action_space.shape).to(device)
    logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)
    rewards = torch.zeros((args.num_steps, args.num_envs)).to(device)
    dones = torch.zeros((args.num_steps, args.num_envs)).to(device)
    values = torch.zeros((args.num_steps, args.num_envs)).to(device)
    global_step = 0
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.Tensor(next_obs).to(device)
    next_done = torch.zeros(args.num_envs).to(device)
    for iteration in range(1, args.num_iterations + 1):
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            lrnow = frac * args.learning_rate
            optimizer.param_groups[0]["lr"] = lrnow
        for step in range(0, args.num_steps):
            global_step += args.num_envs
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
            next_done = np.logical_or(terminations, truncations)
            rewards[step] = torch.tensor(reward).to(device).view(-1)
            next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(next_done).to(device)
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards).to(device)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values
        b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1,) + envs.single_action_space.shape)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)
        b_inds = np.arange(args.batch_size)
        clipfracs = []
        for epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, args.batch_size, args.minibatch_size):
                end = start + args.minibatch_size
                mb_inds = b_inds[start:end]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]
                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()
                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -args.clip_coef, args.clip_coef)
                    v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                    v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
                    v_loss = 0.5 * v_loss_max.mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and approx_kl > args.target_kl:
                break
        y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
        print("ppo", iteration, f"{v_loss.item():.5f} {pg_loss.item():.5f} {entropy_loss.item():.5f} {approx_kl.item():.6f} {np.mean(clipfracs):.4f} {explained_var:.4f}")

class QNetwork(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(np.array(env.single_observation_space.shape).prod(), 16), nn.ReLU(),
                                     nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, env.single_action_space.n))
    def forward(self, x): return self.network(x)
def linear_schedule(start_e: float, end_e: float, duration: int, t: int):
    slope = (end_e - start_e) / duration
    return max(slope * t + start_e, end_e)

def dqn(tau=1.0, target_network_frequency=5, gamma=0.99, batch_size=16, learning_starts=10, train_frequency=2):
    random.seed(1); np.random.seed(1); torch.manual_seed(1)
    device = torch.device("cpu")
    envs = SyncVectorEnv(1, 4, seed=3)
    q_network = QNetwork(envs).to(device)
    optimizer = optim.Adam(q_network.parameters(), lr=2.5e-4)
    target_network = QNetwork(envs).to(device)
    target_network.load_state_dict(q_network.state_dict())
    rb = []
    obs, _ = envs.reset(seed=1)
    for global_step in range(40):
        epsilon = linear_schedule(1.0, 0.05, 20, global_step)
        if random.random() < epsilon:
            actions = np.array([random.randrange(2) for _ in range(envs.num_envs)])
        else:
            q_values = q_network(torch.Tensor(obs).to(device))
            actions = torch.argmax(q_values, dim=1).cpu().numpy()
        next_obs, rewards, terminations, truncations, infos = envs.step(actions)
        real_next_obs = next_obs.copy()
        rb.append((obs.copy(), real_next_obs, actions, rewards, terminations))
        obs = next_obs
        if global_step > learning_starts:
            if global_step % train_frequency == 0:
                idx = np.random.randint(0, len(rb), size=batch_size)
                o = torch.tensor(np.concatenate([rb[i][0] for i in idx]))
                no = torch.tensor(np.concatenate([rb[i][1] for i in idx]))
                a = torch.tensor(np.stack([rb[i][2] for i in idx]))
                r = torch.tensor(np.stack([rb[i][3] for i in idx]))
                d = torch.tensor(np.stack([rb[i][4] for i in idx]).astype(np.float32))
                with torch.no_grad():
                    target_max, _ = target_network(no).max(dim=1)
                    td_target = r.flatten() + gamma * target_max * (1 - d.flatten())
                old_val = q_network(o).gather(1, a).squeeze()
                loss = F.mse_loss(td_target, old_val)
                optimizer.zero_grad(); loss.backward(); optimizer.step()
                print("dqn", global_step, f"{loss.item():.5f} {old_val.mean().item():.5f}")
            if global_step % target_network_frequency == 0:
                for target_network_param, q_network_param in zip(target_network.parameters(), q_network.parameters()):
                    target_network_param.data.copy_(tau * q_network_param.data + (1.0 - tau) * target_network_param.data)
    model_path = io.BytesIO()
    torch.save(q_network.state_dict(), model_path)
    model_path.seek(0)
    q2 = QNetwork(envs); q2.load_state_dict(torch.load(model_path, map_location=device)); q2.eval()
    print(q2(torch.ones(1, 4)))

LOG_STD_MAX = 2; LOG_STD_MIN = -5
class SoftQNetwork(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.fc1 = nn.Linear(np.array(env.single_observation_space.shape).prod() + np.prod(env.single_action_space.shape), 16)
        self.fc2 = nn.Linear(16, 16); self.fc3 = nn.Linear(16, 1)
    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x)); x = F.relu(self.fc2(x)); return self.fc3(x)
class Actor(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.fc1 = nn.Linear(np.array(env.single_observation_space.shape).prod(), 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc_mean = nn.Linear(16, np.prod(env.single_action_space.shape))
        self.fc_logstd = nn.Linear(16, np.prod(env.single_action_space.shape))
        self.register_buffer("action_scale", torch.tensor((env.single_action_space.high - env.single_action_space.low) / 2.0, dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor((env.single_action_space.high + env.single_action_space.low) / 2.0, dtype=torch.float32))
    def forward(self, x):
        x = F.relu(self.fc1(x)); x = F.relu(self.fc2(x))
        mean = self.fc_mean(x); log_std = self.fc_logstd(x)
        log_std = torch.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        return mean, log_std
    def get_action(self, x):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean

def sac(gamma=0.99, tau=0.005, batch_size=16, learning_starts=10, policy_frequency=2, target_network_frequency=1, autotune=True):
    random.seed(1); np.random.seed(1); torch.manual_seed(1)
    device = torch.device("cpu")
    envs = SyncVectorEnv(1, 3, discrete=False, seed=5)
    max_action = float(envs.single_action_space.high[0])
    actor = Actor(envs).to(device)
    qf1 = SoftQNetwork(envs).to(device); qf2 = SoftQNetwork(envs).to(device)
    qf1_target = SoftQNetwork(envs).to(device); qf2_target = SoftQNetwork(envs).to(device)
    qf1_target.load_state_dict(qf1.state_dict()); qf2_target.load_state_dict(qf2.state_dict())
    q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=1e-3)
    actor_optimizer = optim.Adam(list(actor.parameters()), lr=3e-4)
    if autotune:
        target_entropy = -torch.prod(torch.Tensor(envs.single_action_space.shape).to(device)).item()
        log_alpha = torch.zeros(1, requires_grad=True, device=device)
        alpha = log_alpha.exp().item()
        a_optimizer = optim.Adam([log_alpha], lr=1e-3)
    rb = []
    obs, _ = envs.reset(seed=1)
    for global_step in range(40):
        if global_step < learning_starts:
            actions = np.array([np.random.uniform(-1, 1, 2).astype(np.float32) for _ in range(envs.num_envs)])
        else:
            actions, _, _ = actor.get_action(torch.Tensor(obs).to(device))
            actions = actions.detach().cpu().numpy()
        next_obs, rewards, terminations, truncations, infos = envs.step(actions)
        rb.append((obs.copy(), next_obs.copy(), actions, rewards, terminations)); obs = next_obs
        if global_step > learning_starts:
            idx = np.random.randint(0, len(rb), size=batch_size)
            o = torch.tensor(np.concatenate([rb[i][0] for i in idx])); no = torch.tensor(np.concatenate([rb[i][1] for i in idx]))
            a = torch.tensor(np.concatenate([rb[i][2] for i in idx]), dtype=torch.float32)
            r = torch.tensor(np.stack([rb[i][3] for i in idx])); d = torch.tensor(np.stack([rb[i][4] for i in idx]), dtype=torch.float32)
            with torch.no_grad():
                next_state_actions, next_state_log_pi, _ = actor.get_action(no)
                qf1_next_target = qf1_target(no, next_state_actions); qf2_next_target = qf2_target(no, next_state_actions)
                min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
                next_q_value = r.flatten() + (1 - d.flatten()) * gamma * (min_qf_next_target).view(-1)
            qf1_a_values = qf1(o, a).view(-1); qf2_a_values = qf2(o, a).view(-1)
            qf1_loss = F.mse_loss(qf1_a_values, next_q_value); qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
            qf_loss = qf1_loss + qf2_loss
            q_optimizer.zero_grad(); qf_loss.backward(); q_optimizer.step()
            if global_step % policy_frequency == 0:
                for _ in range(policy_frequency):
                    pi, log_pi, _ = actor.get_action(o)
                    qf1_pi = qf1(o, pi); qf2_pi = qf2(o, pi)
                    min_qf_pi = torch.min(qf1_pi, qf2_pi)
                    actor_loss = ((alpha * log_pi) - min_qf_pi).mean()
                    actor_optimizer.zero_grad(); actor_loss.backward(); actor_optimizer.step()
                    if autotune:
                        with torch.no_grad():
                            _, log_pi, _ = actor.get_action(o)
                        alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()
                        a_optimizer.zero_grad(); alpha_loss.backward(); a_optimizer.step()
                        alpha = log_alpha.exp().item()
            if global_step % target_network_frequency == 0:
                for param, target_param in zip(qf1.parameters(), qf1_target.parameters()):
                    target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
                for param, target_param in zip(qf2.parameters(), qf2_target.parameters()):
                    target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)
            if global_step % 6 == 0:
                print("sac", global_step, f"{qf1_a_values.mean().item():.5f} {qf_loss.item() / 2.0:.5f} {actor_loss.item():.5f} {alpha:.6f} {alpha_loss.item():.5f}")
    print(actor.action_scale, actor)

ppo(); dqn(); sac()
