"""SummaryWriter: TensorBoard event files from cthtorch, written by the
tensorboard package's EventFileWriter (its record writer, its Event
protobufs), so TensorBoard and its EventAccumulator read them as they read
PyTorch's."""
import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from cthtorch.utils.tensorboard import _summary


class FileWriter:
    """One event file in log_dir: events and summaries, written in the background."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


def _not_yet(what, why):
    raise NotImplementedError("SummaryWriter.%s is not implemented in cthtorch: %s" % (what, why))


class SummaryWriter:
    """torch.utils.tensorboard.SummaryWriter: log_dir defaults to
    runs/<date>_<host><comment>."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer = None
        self.all_writers = None
        self._projector_config = None
        self._get_file_writer()

    def _get_file_writer(self):
        """The main event file, (re)opened on first use after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard drops the events at and after purge_step from earlier runs
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def _write(self, summary, global_step, walltime):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._write(_summary.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each tag goes to its own run, log_dir/<main_tag>_<tag>, under the tag main_tag."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(base, main_tag.replace("/", "_") + "_" + tag)
            fw = self.all_writers.get(path)
            if fw is None:
                fw = self.all_writers[path] = FileWriter(path, self.max_queue, self.flush_secs,
                                                         self.filename_suffix)
            fw.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        self._write(_summary.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._write(_summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images as one grid image (8 a row)."""
        self._write(_summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, as a grid), rendered with Agg."""
        if isinstance(figure, list):
            self.add_images(tag, _summary.figures_to_array(figure, close), global_step, walltime,
                            dataformats="NHWC")
        else:
            self.add_image(tag, _summary.figure_to_array(figure, close), global_step, walltime, dataformats="HWC")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._write(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """One hparams session in the run log_dir/<run_name> (default: the
        time), with the metrics logged there as scalars."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, start, end = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for s in (exp, start, end):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model traced on input_to_model, as TensorBoard's graph (a
        GraphDef event, then the step's RunMetadata, as torch writes them)."""
        from tensorboard.compat.proto.event_pb2 import TaggedRunMetadata
        from cthtorch.utils.tensorboard._graph import graph_def
        gd, stats = graph_def(model, input_to_model, verbose, use_strict_trace)
        w = self._get_file_writer()
        w.add_event(Event(graph_def=gd.SerializeToString()))
        w.add_event(Event(tagged_run_metadata=TaggedRunMetadata(tag="step1",
                                                                run_metadata=stats.SerializeToString())))

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """mat (N x D) for TensorBoard's projector, with optional labels and N x C x H x W images."""
        from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
        from cthtorch.utils.tensorboard import _embedding
        if self._projector_config is None:
            self._projector_config = ProjectorConfig()
        _embedding.add_embedding(self._get_file_writer().get_logdir(), self._projector_config, mat, metadata,
                                 label_img, global_step, tag, metadata_header)

    def add_video(self, *args, **kwargs):
        _not_yet("add_video", "video summaries are not written yet")

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        self._write(_summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        labels, predictions = _summary.make_np(labels), _summary.make_np(predictions)
        self._write(_summary.pr_curve(tag, labels, predictions, num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127,
                         weights=None, walltime=None):
        self._write(_summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                                          false_negative_counts, precision, recall, num_thresholds, weights),
                    global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._write(_summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
                    global_step, walltime)

    def add_mesh(self, *args, **kwargs):
        _not_yet("add_mesh", "mesh summaries are not written yet")

    def add_custom_scalars(self, layout):
        self._write(_summary.custom_scalars(layout), None, None)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError("Expected 3 tags, got %d." % len(tags))
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def flush(self):
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
