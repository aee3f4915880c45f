"""The datasets read from image trees on disk (Omniglot, Caltech101/256, Flowers102, Food101, OxfordIIITPet,
VOC segmentation/detection) and the folder helpers, on tiny fake trees each test writes in torchvision's
layout: lengths, labels, class lists, the pixels read back, the targets' types and the errors for missing
data. Nothing is downloaded."""
import json
import os
import zipfile

import numpy as np
import pytest
from PIL import Image

from cthtorch.vision import datasets
from cthtorch.vision.datasets import folder as folder_mod


def _save(path, seed, size=(5, 4), mode="RGB"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shape = (size[1], size[0], 3) if mode == "RGB" else (size[1], size[0])
    a = np.random.RandomState(seed).randint(0, 256, shape).astype(np.uint8)
    Image.fromarray(a, mode).save(path)
    return a


def test_omniglot_characters_are_classes(tmp_path):
    base = tmp_path / "omniglot-py" / "images_background"
    saved = {}
    for a, alphabet in enumerate(("Greek", "Latin")):
        for c in range(2):
            for k in range(3 if c else 2):
                path = base / alphabet / ("character%02d" % (c + 1)) / ("%d_%02d.png" % (a * 10 + c, k))
                saved[str(path)] = _save(str(path), a * 100 + c * 10 + k, mode="L")
    ds = datasets.Omniglot(str(tmp_path), transform=np.asarray)
    assert len(ds) == 2 + 3 + 2 + 3
    # one class per character, in the listing order of alphabets then characters
    chars = [os.path.join(a, c) for a in os.listdir(base) for c in os.listdir(base / a)]
    assert ds._characters == chars
    labels = [ds[i][1] for i in range(len(ds))]
    assert sorted(set(labels)) == [0, 1, 2, 3] and labels == sorted(labels)
    for i in range(len(ds)):
        img, label = ds[i]
        name = ds._flat_character_images[i][0]
        np.testing.assert_array_equal(img, saved[str(base / chars[label] / name)])
    # the evaluation set from its zip beside the folder
    ev = tmp_path / "omniglot-py" / "images_evaluation.zip"
    with zipfile.ZipFile(str(ev), "w") as z:
        _save(str(tmp_path / "src.png"), 7, mode="L")
        z.write(str(tmp_path / "src.png"), "images_evaluation/Runic/character01/1_01.png")
    ev_ds = datasets.Omniglot(str(tmp_path), background=False)
    assert len(ev_ds) == 1 and ev_ds[0][0].mode == "L" and ev_ds[0][1] == 0
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted. You can use download=True"):
        datasets.Omniglot(str(tmp_path / "nowhere"))
    with pytest.raises(RuntimeError, match="cannot fetch anything here"):
        datasets.Omniglot(str(tmp_path / "nowhere"), download=True)


def test_caltech101_and_256(tmp_path):
    import scipy.io
    root = tmp_path / "caltech101"
    for cat, n in (("BACKGROUND_Google", 1), ("Faces", 2), ("accordion", 1)):
        for i in range(1, n + 1):
            _save(str(root / "101_ObjectCategories" / cat / ("image_%04d.jpg" % i)), i)
    contour = np.arange(6.0).reshape(2, 3)
    os.makedirs(root / "Annotations" / "Faces_2")
    scipy.io.savemat(str(root / "Annotations" / "Faces_2" / "annotation_0002.mat"), {"obj_contour": contour})
    ds = datasets.Caltech101(str(tmp_path), target_type=["category", "annotation"])
    assert ds.categories == ["Faces", "accordion"] and ds.annotation_categories == ["Faces_2", "accordion"]
    assert len(ds) == 3 and ds.y == [0, 0, 1] and ds.index == [1, 2, 1]
    img, (label, ann) = ds[1]
    assert label == 0 and img.size == (5, 4)
    np.testing.assert_array_equal(ann, contour)
    assert datasets.Caltech101(str(tmp_path))[2][1] == 1
    with pytest.raises(ValueError, match="Unknown value 'bbox' for argument target_type"):
        datasets.Caltech101(str(tmp_path), target_type="bbox")
    root = tmp_path / "caltech256" / "256_ObjectCategories"
    for c, cat in enumerate(("001.ak47", "002.american-flag")):
        for i in range(1, 3):
            _save(str(root / cat / ("%03d_%04d.jpg" % (c + 1, i))), c * 10 + i, mode="L")
    (root / "001.ak47" / "notes.txt").write_text("not an image")
    ds = datasets.Caltech256(str(tmp_path))
    assert len(ds) == 4 and ds.y == [0, 0, 1, 1]
    img, label = ds[3]
    assert label == 1 and img.mode == "L"     # stored grayscale, returned as stored
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.Caltech256(str(tmp_path / "nowhere"))


def test_flowers102_and_food101(tmp_path):
    import scipy.io
    base = tmp_path / "flowers-102"
    for i in range(1, 6):
        _save(str(base / "jpg" / ("image_%05d.jpg" % i)), i)
    scipy.io.savemat(str(base / "imagelabels.mat"), {"labels": np.array([[3, 1, 2, 3, 1]])})
    scipy.io.savemat(str(base / "setid.mat"), {"trnid": np.array([[2, 4]]), "valid": np.array([[5, 1]]),
                                               "tstid": np.array([[1, 3]])})
    train = datasets.Flowers102(str(tmp_path))
    assert len(train) == 2 and train._labels == [0, 2]
    img, label = train[1]
    assert img.mode == "RGB" and img.size == (5, 4) and label == 2
    assert datasets.Flowers102(str(tmp_path), split="test")._labels == [2, 1]
    assert "split=val" in repr(datasets.Flowers102(str(tmp_path), split="val"))
    with pytest.raises(ValueError, match="Unknown value 'dev' for argument split"):
        datasets.Flowers102(str(tmp_path), split="dev")
    base = tmp_path / "food-101"
    meta = {"waffles": ["waffles/11", "waffles/12"], "apple_pie": ["apple_pie/3"]}
    for paths in meta.values():
        for p in paths:
            _save(str(base / "images" / (p + ".jpg")), len(p))
    os.makedirs(base / "meta")
    (base / "meta" / "train.json").write_text(json.dumps(meta))
    ds = datasets.Food101(str(tmp_path))
    assert ds.classes == ["apple_pie", "waffles"] and ds._labels == [1, 1, 0] and len(ds) == 3
    assert ds[2][1] == 0 and ds[2][0].size == (5, 4)
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True"):
        datasets.Food101(str(tmp_path / "nowhere"))


def test_oxford_iiit_pet_targets_and_class_names(tmp_path):
    base = tmp_path / "oxford-iiit-pet"
    rows = [("Abyssinian_1", 1, 1, 1), ("great_pyrenees_12", 2, 2, 1), ("Abyssinian_7", 1, 1, 1)]
    for k, (image_id, *_rest) in enumerate(rows):
        _save(str(base / "images" / (image_id + ".jpg")), k)
        _save(str(base / "annotations" / "trimaps" / (image_id + ".png")), k + 5, mode="L")
    (base / "annotations" / "trainval.txt").write_text("".join("%s %d %d %d\n" % r for r in rows))
    ds = datasets.OxfordIIITPet(str(tmp_path), target_types=["category", "binary-category", "segmentation"])
    assert ds.classes == ["Abyssinian", "Great Pyrenees"] and ds.class_to_idx["Great Pyrenees"] == 1
    img, (label, species, trimap) = ds[1]
    assert label == 1 and species == 1 and trimap.mode == "L" and img.mode == "RGB"
    assert datasets.OxfordIIITPet(str(tmp_path), target_types=[])[0][1] is None
    joint = datasets.OxfordIIITPet(str(tmp_path), transforms=lambda im, t: (im.size, t + 10))
    assert joint[2] == ((5, 4), 10)
    with pytest.raises(ValueError, match="Only transforms or transform/target_transform can be passed"):
        datasets.OxfordIIITPet(str(tmp_path), transforms=lambda a, b: (a, b), transform=lambda a: a)


_VOC_XML = """<annotation><folder>VOC2012</folder><filename>{id}.jpg</filename>
<size><width>5</width><height>4</height><depth>3</depth></size>
{objects}</annotation>"""
_VOC_OBJ = "<object><name>{name}</name><difficult>0</difficult><bndbox><xmin>1</xmin><ymin>1</ymin>" \
           "<xmax>3</xmax><ymax>2</ymax></bndbox></object>"


def _voc_tree(tmp_path):
    voc = tmp_path / "VOCdevkit" / "VOC2012"
    ids = ["2008_000001", "2008_000002"]
    for k, i in enumerate(ids):
        _save(str(voc / "JPEGImages" / (i + ".jpg")), k)
        m = np.zeros((4, 5), np.uint8)
        m[1, :k + 2] = np.arange(k + 2)
        mask = Image.fromarray(m, "P")
        mask.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0])   # VOC's first colours: distinct, so kept apart
        os.makedirs(voc / "SegmentationClass", exist_ok=True)
        mask.save(str(voc / "SegmentationClass" / (i + ".png")))
        os.makedirs(voc / "Annotations", exist_ok=True)
        objects = "".join(_VOC_OBJ.format(name=n) for n in (["dog", "cat"] if k else ["person"]))
        (voc / "Annotations" / (i + ".xml")).write_text(_VOC_XML.format(id=i, objects=objects))
    for sub in ("Segmentation", "Main"):
        os.makedirs(voc / "ImageSets" / sub)
        (voc / "ImageSets" / sub / "train.txt").write_text("\n".join(ids) + "\n")


def test_voc_segmentation_and_detection(tmp_path):
    _voc_tree(tmp_path)
    seg = datasets.VOCSegmentation(str(tmp_path))
    assert len(seg) == 2 and seg.masks[1].endswith("2008_000002.png")
    img, mask = seg[1]
    assert img.mode == "RGB" and mask.mode == "P" and np.asarray(mask).max() == 2
    det = datasets.VOCDetection(str(tmp_path), transforms=lambda im, t: (im.size, t))
    size, target = det[0]
    ann = target["annotation"]
    assert size == (5, 4) and ann["filename"] == "2008_000001.jpg" and ann["size"]["width"] == "5"
    assert isinstance(ann["object"], list) and len(ann["object"]) == 1      # a list even for one object
    assert ann["object"][0]["bndbox"] == {"xmin": "1", "ymin": "1", "xmax": "3", "ymax": "2"}
    assert [o["name"] for o in det[1][1]["annotation"]["object"]] == ["dog", "cat"]
    with pytest.raises(ValueError, match="Unknown value 'test' for argument image_set"):
        datasets.VOCDetection(str(tmp_path), image_set="test")
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.VOCDetection(str(tmp_path), year="2007")


def test_coco_and_video_datasets_say_what_they_need(tmp_path):
    try:
        import pycocotools  # noqa: F401
        have_coco = True
    except ImportError:
        have_coco = False
    ann = tmp_path / "ann.json"
    ann.write_text(json.dumps({"images": [{"id": 1, "file_name": "a.jpg"}], "annotations": [],
                               "categories": []}))
    if have_coco:
        assert len(datasets.CocoDetection(str(tmp_path), str(ann))) == 1
    else:
        with pytest.raises(NotImplementedError, match="pycocotools is not installed"):
            datasets.CocoDetection(str(tmp_path), str(ann))
    for cls in (datasets.Kinetics, datasets.UCF101, datasets.HMDB51):
        with pytest.raises(NotImplementedError, match=cls.__name__ + " decodes video files"):
            cls(str(tmp_path), frames_per_clip=4)
    # every name of torchvision's datasets.__all__ is there; the ones not read yet say so when built
    assert all(hasattr(datasets, name) for name in datasets.__all__) and len(set(datasets.__all__)) == 73
    for cls in (datasets.LSUN, datasets.SBDataset, datasets.Flickr8k, datasets.Sintel):
        with pytest.raises(NotImplementedError, match="torchvision.datasets.%s is not implemented" % cls.__name__):
            cls(str(tmp_path))


def test_folder_helpers_follow_torchvision(tmp_path):
    for c in ("a", "b"):
        _save(str(tmp_path / c / "x.png"), 1)
    assert folder_mod.has_file_allowed_extension("X.PNG", (".png",)) and folder_mod.is_image_file("y.JPG")
    assert folder_mod.make_dataset(str(tmp_path), extensions=".png") == [
        (str(tmp_path / "a" / "x.png"), 0), (str(tmp_path / "b" / "x.png"), 1)]
    with pytest.raises(ValueError, match="Both extensions and is_valid_file cannot be None or not None"):
        folder_mod.make_dataset(str(tmp_path), extensions=".png", is_valid_file=lambda p: True)

    class OnlyB(datasets.ImageFolder):
        def find_classes(self, directory):
            return ["b"], {"b": 0}
    ds = OnlyB(str(tmp_path))
    assert ds.classes == ["b"] and ds.samples == [(str(tmp_path / "b" / "x.png"), 0)]


def test_vision_dataset_standard_transform_and_repr(tmp_path):
    """torchvision wraps transform/target_transform into self.transforms (a StandardTransform), which datasets
    written after torchvision's own call as self.transforms(img, target), and prints it under the dataset: its
    first line indented, the rest as StandardTransform's repr lays them out"""
    from cthtorch.vision.datasets.vision import StandardTransform, VisionDataset
    from cthtorch.vision import transforms as T

    class Pairs(VisionDataset):
        def __getitem__(self, i):
            return self.transforms(i, -i) if self.transforms is not None else (i, -i)

        def __len__(self):
            return 3

    ds = Pairs(str(tmp_path), transform=lambda x: x * 10, target_transform=lambda y: y - 1)
    assert isinstance(ds.transforms, StandardTransform) and ds[2] == (20, -3)
    assert Pairs(str(tmp_path)).transforms is None and Pairs(str(tmp_path))[1] == (1, -1)
    ds = Pairs(str(tmp_path), transform=T.Compose([T.ToTensor(), T.Normalize((0.5,), (0.5,))]))
    assert repr(ds) == ("Dataset Pairs\n    Number of datapoints: 3\n    Root location: %s\n    StandardTransform\n"
                        "Transform: Compose(\n               ToTensor()\n"
                        "               Normalize(mean=(0.5,), std=(0.5,))\n           )" % tmp_path)
    ds = Pairs(None, target_transform=T.ToTensor())
    assert repr(ds) == "Dataset Pairs\n    Number of datapoints: 3\n    StandardTransform\nTarget transform: ToTensor()"

    class KeywordsOnly(datasets.DatasetFolder):   # torchvision calls make_dataset with keywords
        @staticmethod
        def make_dataset(directory, **kwargs):
            return [(directory, kwargs["class_to_idx"]["a"])]
    _save(str(tmp_path / "a" / "x.png"), 1)
    assert KeywordsOnly(str(tmp_path), loader=None, extensions=".png").samples == [(str(tmp_path), 0)]


def test_celeba_lists_splits_and_targets(tmp_path):
    base = tmp_path / "celeba"
    names = ["000001.jpg", "000002.jpg", "000003.jpg"]
    for k, n in enumerate(names):
        _save(str(base / "img_align_celeba" / n), k)
    (base / "list_eval_partition.txt").write_text("000001.jpg 0\n000002.jpg 2\n000003.jpg 0\n")
    (base / "identity_CelebA.txt").write_text("000001.jpg 17\n000002.jpg 4\n000003.jpg 17\n")
    (base / "list_bbox_celeba.txt").write_text("3\nimage_id x_1 y_1 width height\n000001.jpg    95  71 226 313\n"
                                               "000002.jpg 72 94 221 306\n000003.jpg 216 59 91 126\n")
    (base / "list_landmarks_align_celeba.txt").write_text(
        "3\nlefteye_x lefteye_y\n000001.jpg 69  109\n000002.jpg 69 110\n000003.jpg 76 112\n")
    (base / "list_attr_celeba.txt").write_text("3\nSmiling Young \n000001.jpg -1  1\n000002.jpg  1 -1\n"
                                               "000003.jpg  1  1\n")
    train = datasets.CelebA(str(tmp_path), target_type=["attr", "identity", "bbox", "landmarks"])
    assert len(train) == 2 and train.filename == ["000001.jpg", "000003.jpg"]
    assert train.attr_names[:2] == ["Smiling", "Young"]
    img, (attr, ident, bbox, marks) = train[1]
    assert attr.tolist() == [1, 1] and int(ident) == 17 and bbox.tolist() == [216, 59, 91, 126]
    assert marks.tolist() == [76, 112] and attr.dtype.is_floating_point is False and img.size == (5, 4)
    assert train[0][1][0].tolist() == [0, 1]          # -1 -> 0, 1 -> 1
    test = datasets.CelebA(str(tmp_path), split="test", target_type="identity")
    assert len(test) == 1 and int(test[0][1]) == 4
    assert len(datasets.CelebA(str(tmp_path), split="all")) == 3
    assert datasets.CelebA(str(tmp_path), target_type=[])[0][1] is None
    with pytest.raises(ValueError, match='Target type "eyes" is not recognized.'):
        datasets.CelebA(str(tmp_path), target_type="eyes")[0]
    with pytest.raises(RuntimeError, match="target_transform is specified but target_type is empty"):
        datasets.CelebA(str(tmp_path), target_type=[], target_transform=int)
    # wrapped for transforms.v2: the boxes in XYXY (as torchvision converts them); attr and landmarks refused
    from cthtorch.vision import tv_tensors
    wrapped = datasets.wrap_dataset_for_transforms_v2(datasets.CelebA(str(tmp_path), target_type=["identity", "bbox"]))
    ident, box = wrapped[1][1]
    assert int(ident) == 17 and type(box) is tv_tensors.BoundingBoxes and box.format.value == "XYXY"
    assert box.tolist() == [[216, 59, 307, 185]] and box.canvas_size == (4, 5)   # one box a row
    with pytest.raises(RuntimeError, match="^`CelebA` dataset with `target_type=\\['attr', 'landmarks', ...\\]` is "
                                           "currently not supported by this wrapper"):
        datasets.wrap_dataset_for_transforms_v2(datasets.CelebA(str(tmp_path), target_type=["bbox", "landmarks"]))


def test_imagenet_from_meta_file_and_class_folders(tmp_path):
    import cthtorch
    for w, n in (("n01440764", 2), ("n01443537", 1)):
        for i in range(n):
            _save(str(tmp_path / "val" / w / ("ILSVRC2012_val_%08d.JPEG" % (i + len(w)))), i)
    cthtorch.save(({"n01440764": ("tench", "Tinca tinca"), "n01443537": ("goldfish", "Carassius auratus")},
                   ["n01440764", "n01440764", "n01443537"]), str(tmp_path / "meta.bin"))
    ds = datasets.ImageNet(str(tmp_path), split="val")
    assert ds.wnids == ["n01440764", "n01443537"] and ds.classes[1] == ("goldfish", "Carassius auratus")
    assert ds.class_to_idx["Tinca tinca"] == 0 and ds.wnid_to_idx["n01443537"] == 1
    assert len(ds) == 3 and ds[2][1] == 1 and ds.root == str(tmp_path)
    with pytest.raises(RuntimeError, match="ILSVRC2012_img_train.tar is not present in the root directory"):
        datasets.ImageNet(str(tmp_path), split="train")
    (tmp_path / "ILSVRC2012_img_train.tar").write_bytes(b"")
    with pytest.raises(NotImplementedError, match="unpacking ILSVRC2012_img_train.tar is not implemented"):
        datasets.ImageNet(str(tmp_path), split="train")


def test_stanford_cars_eurosat_dtd_gtsrb_fgvc(tmp_path):
    import scipy.io
    base = tmp_path / "stanford_cars"
    for k, n in enumerate(("00001.jpg", "00002.jpg")):
        _save(str(base / "cars_train" / n), k)
    os.makedirs(base / "devkit")
    annos = np.array([("00001.jpg", 2), ("00002.jpg", 1)], dtype=[("fname", "O"), ("class", "O")])
    scipy.io.savemat(str(base / "devkit" / "cars_train_annos.mat"), {"annotations": annos})
    scipy.io.savemat(str(base / "devkit" / "cars_meta.mat"),
                     {"class_names": np.array(["AM General Hummer SUV 2000", "Acura RL Sedan 2012"], dtype=object)})
    cars = datasets.StanfordCars(str(tmp_path))
    assert cars.classes == ["AM General Hummer SUV 2000", "Acura RL Sedan 2012"] and len(cars) == 2
    assert cars[0][1] == 1 and cars[1][1] == 0 and cars[0][0].mode == "RGB"
    with pytest.raises(RuntimeError, match="Dataset not found."):
        datasets.StanfordCars(str(tmp_path), split="test")

    for cls in ("Forest", "AnnualCrop"):
        _save(str(tmp_path / "eurosat" / "2750" / cls / (cls + "_1.jpg")), 3)
    euro = datasets.EuroSAT(str(tmp_path))
    assert euro.classes == ["AnnualCrop", "Forest"] and euro.root == str(tmp_path) and len(euro) == 2

    dtd = tmp_path / "dtd" / "dtd"
    for rel in ("banded/banded_0002.jpg", "zigzagged/zigzagged_0001.jpg", "banded/banded_0004.jpg"):
        _save(str(dtd / "images" / rel), len(rel))
    os.makedirs(dtd / "labels")
    (dtd / "labels" / "train1.txt").write_text("zigzagged/zigzagged_0001.jpg\nbanded/banded_0004.jpg\n")
    d = datasets.DTD(str(tmp_path))
    assert d.classes == ["banded", "zigzagged"] and d._labels == [1, 0] and d[1][1] == 0
    assert "split=train, partition=1" in repr(d)

    g = tmp_path / "gtsrb"
    for c in ("00000", "00002"):
        _save(str(g / "GTSRB" / "Training" / c / "00000_00000.ppm"), 4)
    os.makedirs(g / "GTSRB" / "Final_Test" / "Images")
    _save(str(g / "GTSRB" / "Final_Test" / "Images" / "00000.ppm"), 5)
    (g / "GT-final_test.csv").write_text("Filename;Width;Height;ClassId\n00000.ppm;5;4;16\n")
    train = datasets.GTSRB(str(tmp_path))
    assert [t for _, t in train._samples] == [0, 1] and train[1][0].mode == "RGB"
    assert datasets.GTSRB(str(tmp_path), split="test")[0][1] == 16

    data = tmp_path / "fgvc-aircraft-2013b" / "data"
    for i in ("0034309", "1340192"):
        _save(str(data / "images" / (i + ".jpg")), 6)
    (data / "variants.txt").write_text("707-320\nA300B4\n")
    (data / "images_variant_trainval.txt").write_text("0034309 A300B4\n1340192 707-320\n")
    air = datasets.FGVCAircraft(str(tmp_path))
    assert air.classes == ["707-320", "A300B4"] and air._labels == [1, 0] and air[0][0].size == (5, 4)


def test_usps_from_bz2_libsvm(tmp_path):
    import bz2
    rs = np.random.RandomState(0)
    rows = rs.uniform(-1, 1, (3, 256))
    labels = [10, 1, 5]
    text = "".join("%d %s\n" % (lab, " ".join("%d:%.6f" % (j + 1, v) for j, v in enumerate(r)))
                   for lab, r in zip(labels, rows))
    (tmp_path / "usps.t.bz2").write_bytes(bz2.compress(text.encode()))
    ds = datasets.USPS(str(tmp_path), train=False)
    assert len(ds) == 3 and ds.targets == [9, 0, 4]
    img, target = ds[0]
    assert img.mode == "L" and img.size == (16, 16) and target == 9
    want = ((rows[0].astype(np.float32).reshape(16, 16) + 1) / 2 * 255).astype(np.uint8)
    np.testing.assert_array_equal(np.asarray(img), want)
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.USPS(str(tmp_path))


def test_cityscapes_targets_and_label_table(tmp_path):
    for city, frames in (("aachen", ["000000_000019"]), ("bochum", ["000001_000019", "000002_000019"])):
        for f in frames:
            stem = "%s_%s" % (city, f)
            _save(str(tmp_path / "leftImg8bit" / "train" / city / (stem + "_leftImg8bit.png")), len(stem))
            gt = tmp_path / "gtFine" / "train" / city
            _save(str(gt / (stem + "_gtFine_labelIds.png")), 1, mode="L")
            _save(str(gt / (stem + "_gtFine_instanceIds.png")), 2, mode="L")
            os.makedirs(gt, exist_ok=True)
            (gt / (stem + "_gtFine_polygons.json")).write_text(json.dumps({"imgHeight": 4, "objects": []}))
    ds = datasets.Cityscapes(str(tmp_path), target_type=["semantic", "polygon"])
    assert len(ds) == 3
    img, (sem, poly) = ds[0]
    assert img.mode == "RGB" and sem.mode == "L" and poly == {"imgHeight": 4, "objects": []}
    assert ds.targets[0][0].endswith("_gtFine_labelIds.png") and "Mode: gtFine" in repr(ds)
    table = datasets.Cityscapes.classes
    assert len(table) == 35 and [c.id for c in table[:34]] == list(range(34))
    train_ids = sorted(c.train_id for c in table if not c.ignore_in_eval)
    assert train_ids == list(range(19))          # the 19 evaluated classes
    assert table[26].name == "car" and table[26].color == (0, 0, 142) and table[26].has_instances
    with pytest.raises(ValueError, match="Unknown value 'test' for argument split if mode is 'coarse'"):
        datasets.Cityscapes(str(tmp_path), split="test", mode="coarse")
    with pytest.raises(RuntimeError, match="Dataset not found or incomplete"):
        datasets.Cityscapes(str(tmp_path), split="val")


def test_kitti_imagenette_sun397_country211(tmp_path):
    raw = tmp_path / "Kitti" / "raw" / "training"
    _save(str(raw / "image_2" / "000007.png"), 1)
    os.makedirs(raw / "label_2")
    (raw / "label_2" / "000007.txt").write_text(
        "Car 0.00 0 -1.56 564.62 174.59 616.43 224.74 1.61 1.66 3.20 -0.69 1.69 25.01 -1.59\n"
        "DontCare -1 -1 -10 5.00 229.89 214.12 367.61 -1 -1 -1 -1000 -1000 -1000 -10\n")
    k = datasets.Kitti(str(tmp_path))
    img, target = k[0]
    assert len(k) == 1 and len(target) == 2 and target[0]["type"] == "Car" and target[0]["occluded"] == 0
    assert target[0]["bbox"] == [564.62, 174.59, 616.43, 224.74] and target[1]["rotation_y"] == -10.0
    with pytest.raises(RuntimeError, match="Dataset not found. You may use download=True"):
        datasets.Kitti(str(tmp_path), train=False)

    for w in ("n03445777", "n01440764"):
        _save(str(tmp_path / "imagenette2-160" / "val" / w / ("ILSVRC2012_val_%s.JPEG" % w)), 2)
    nette = datasets.Imagenette(str(tmp_path), split="val", size="160px")
    assert nette.wnids == ["n01440764", "n03445777"] and nette.classes[1] == ("golf ball",)
    assert nette.class_to_idx["Tinca tinca"] == 0 and nette[1][1] == 1 and len(nette) == 2

    sun = tmp_path / "SUN397"
    os.makedirs(sun)
    (sun / "ClassName.txt").write_text("/a/abbey\n/b/bedroom\n/o/office_building/outdoor\n")
    _save(str(sun / "b" / "bedroom" / "sun_aaa.jpg"), 3)
    _save(str(sun / "o" / "office_building" / "outdoor" / "sun_bbb.jpg"), 4)
    s = datasets.SUN397(str(tmp_path))
    assert s.classes == ["abbey", "bedroom", "office_building/outdoor"]
    assert sorted(zip([os.path.basename(p) for p in s._image_files], s._labels)) == [("sun_aaa.jpg", 1),
                                                                                       ("sun_bbb.jpg", 2)]

    for c in ("AD", "AE"):
        _save(str(tmp_path / "country211" / "valid" / c / "1.jpg"), 5)
    country = datasets.Country211(str(tmp_path), split="valid")
    assert country.classes == ["AD", "AE"] and country.root == str(tmp_path) and len(country) == 2


def test_semeion_and_moving_mnist(tmp_path):
    rs = np.random.RandomState(1)
    pixels = rs.randint(0, 2, (3, 256)).astype(float)
    onehot = np.eye(10)[[4, 0, 9]]
    np.savetxt(str(tmp_path / "semeion.data"), np.hstack([pixels, onehot]), fmt="%.4f")
    sem = datasets.SEMEION(str(tmp_path))
    img, label = sem[2]
    assert len(sem) == 3 and label == 9 and img.mode == "L"
    np.testing.assert_array_equal(np.asarray(img), (pixels[2] * 255).astype(np.uint8).reshape(16, 16))
    os.makedirs(tmp_path / "MovingMNIST")
    seq = rs.randint(0, 256, (20, 4, 64, 64)).astype(np.uint8)
    np.save(str(tmp_path / "MovingMNIST" / "mnist_test_seq.npy"), seq)
    mm = datasets.MovingMNIST(str(tmp_path), split="train", split_ratio=5)
    assert len(mm) == 4 and tuple(mm[1].shape) == (5, 1, 64, 64)
    np.testing.assert_array_equal(mm[1].numpy()[:, 0], seq[:5, 1])
    assert tuple(datasets.MovingMNIST(str(tmp_path), split="test", split_ratio=5)[0].shape) == (15, 1, 64, 64)
    with pytest.raises(ValueError, match="`split_ratio` should be `1 <= split_ratio <= 19`, but got 20 instead."):
        datasets.MovingMNIST(str(tmp_path), split_ratio=20)


def test_wrap_dataset_for_transforms_v2(tmp_path):
    import cthtorch
    from cthtorch.vision import tv_tensors
    from cthtorch.vision.transforms import v2
    _voc_tree(tmp_path)
    det = datasets.VOCDetection(str(tmp_path), transforms=v2.RandomHorizontalFlip(p=1.0))
    wrapped = datasets.wrap_dataset_for_transforms_v2(det)
    assert isinstance(wrapped, datasets.VOCDetection) and len(wrapped) == 2 and wrapped.year == "2012"
    img, target = wrapped[1]
    assert set(target) == {"boxes", "labels"} and type(target["boxes"]) is tv_tensors.BoundingBoxes
    # dog and cat (VOC indices 12 and 8), their boxes [1, 1, 3, 2] flipped on a 5 wide canvas by the dataset's
    # own transforms, which now run after the wrapping
    assert target["labels"].tolist() == [12, 8] and target["boxes"].canvas_size == (4, 5)
    assert target["boxes"].tolist() == [[2, 1, 4, 2], [2, 1, 4, 2]]
    assert "annotation" in datasets.wrap_dataset_for_transforms_v2(datasets.VOCDetection(str(tmp_path)), "all")[0][1]
    seg = datasets.wrap_dataset_for_transforms_v2(datasets.VOCSegmentation(str(tmp_path)))
    mask = seg[1][1]
    assert type(mask) is tv_tensors.Mask and mask.shape == (1, 4, 5) and int(mask.max()) == 2   # pil_to_tensor's
    raw = tmp_path / "Kitti" / "raw" / "training"
    _save(str(raw / "image_2" / "000001.png"), 1, size=(30, 20))
    os.makedirs(raw / "label_2")
    (raw / "label_2" / "000001.txt").write_text("Van 0 0 0 1 2 11 12 1 1 1 1 1 1 0\n")
    kitti = datasets.wrap_dataset_for_transforms_v2(datasets.Kitti(str(tmp_path)), ["boxes", "labels", "alpha"])
    _, t = kitti[0]
    assert t["labels"].tolist() == [1] and t["boxes"].tolist() == [[1, 2, 11, 12]] and t["alpha"] == [0.0]
    assert t["boxes"].canvas_size == (20, 30)
    for c in ("a", "b"):
        _save(str(tmp_path / "folder" / c / "1.png"), 2)
    plain = datasets.wrap_dataset_for_transforms_v2(datasets.ImageFolder(str(tmp_path / "folder")))
    assert plain[1][1] == 1 and plain.classes == ["a", "b"]
    with pytest.raises(ValueError, match="Target keys \\['mask'\\] are not available"):
        datasets.wrap_dataset_for_transforms_v2(det, ["mask"])
    with pytest.raises(TypeError, match="meant for subclasses of `torchvision.datasets.VisionDataset`"):
        datasets.wrap_dataset_for_transforms_v2(cthtorch.utils.data.TensorDataset(cthtorch.zeros(2)))
    with pytest.raises(TypeError, match="MovingMNIST is currently not supported by this wrapper"):
        os.makedirs(tmp_path / "MovingMNIST")
        np.save(str(tmp_path / "MovingMNIST" / "mnist_test_seq.npy"), np.zeros((20, 1, 64, 64), np.uint8))
        datasets.wrap_dataset_for_transforms_v2(datasets.MovingMNIST(str(tmp_path)))


def test_lfw_people_pairs_and_fer2013(tmp_path):
    base = tmp_path / "lfw-py"
    for name, n in (("Aaron_Eckhart", 1), ("Abel_Pacheco", 2)):
        for i in range(1, n + 1):
            _save(str(base / "lfw_funneled" / name / ("%s_%04d.jpg" % (name, i))), i)
    (base / "lfw-names.txt").write_text("Aaron_Eckhart\t1\nAbel_Pacheco\t2\n")
    (base / "peopleDevTrain.txt").write_text("2\nAbel_Pacheco\t2\nAaron_Eckhart\t1\n")
    people = datasets.LFWPeople(str(tmp_path), split="train")
    assert people.targets == [1, 1, 0] and people.data[1].endswith("Abel_Pacheco_0002.jpg")
    assert people[2][0].mode == "RGB" and "Classes (identities): 2" in repr(people)
    (base / "pairsDevTest.txt").write_text("1\nAbel_Pacheco\t1\t2\nAbel_Pacheco\t1\tAaron_Eckhart\t1\n")
    pairs = datasets.LFWPairs(str(tmp_path), split="test")
    assert pairs.targets == [1, 0] and pairs.pair_names == [("Abel_Pacheco", "Abel_Pacheco"),
                                                            ("Abel_Pacheco", "Aaron_Eckhart")]
    a, b, same = pairs[1]
    assert a.size == (5, 4) and b.size == (5, 4) and same == 0
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.LFWPeople(str(tmp_path), split="test")
    fer = tmp_path / "fer2013"
    os.makedirs(fer)
    rs = np.random.RandomState(0)
    px = rs.randint(0, 256, (2, 48 * 48))
    (fer / "train.csv").write_text("emotion,pixels\n" + "".join("%d,%s\n" % (e, " ".join(map(str, p)))
                                                                for e, p in zip((3, 6), px)))
    (fer / "test.csv").write_text("pixels\n%s\n" % " ".join(map(str, px[0])))
    train = datasets.FER2013(str(tmp_path))
    img, label = train[1]
    assert len(train) == 2 and label == 6 and img.mode == "L"
    np.testing.assert_array_equal(np.asarray(img), px[1].reshape(48, 48))
    assert datasets.FER2013(str(tmp_path), split="test")[0][1] is None


def test_places365_widerface_flickr30k(tmp_path):
    (tmp_path / "categories_places365.txt").write_text("/b/bedroom 1\n/a/airfield 0\n")
    (tmp_path / "places365_val.txt").write_text("Places365_val_00000001.jpg 1\nPlaces365_val_00000002.jpg 0\n")
    (tmp_path / "places365_train_standard.txt").write_text("/a/airfield/00000001.jpg 0\n")
    for name in ("Places365_val_00000001.jpg", "Places365_val_00000002.jpg"):
        _save(str(tmp_path / "val_256" / name), 1)
    _save(str(tmp_path / "data_256_standard" / "a" / "airfield" / "00000001.jpg"), 2)
    val = datasets.Places365(str(tmp_path), split="val", small=True)
    assert val.classes == ["/a/airfield", "/b/bedroom"] and val.targets == [1, 0] and val[0][1] == 1
    assert val[1][0].mode == "RGB" and "Small: True" in repr(val)
    train = datasets.Places365(str(tmp_path), small=True)
    assert train.imgs[0][0] == os.path.join(str(tmp_path), "data_256_standard", "a", "airfield", "00000001.jpg")
    assert train[0][0].size == (5, 4)
    with pytest.raises(RuntimeError, match="places365_train_challenge.txt does not exist or is corrupted"):
        datasets.Places365(str(tmp_path), split="train-challenge")

    base = tmp_path / "widerface"
    _save(str(base / "WIDER_val" / "images" / "0--Parade" / "a.jpg"), 3)
    _save(str(base / "WIDER_val" / "images" / "1--Handshaking" / "b.jpg"), 4)
    os.makedirs(base / "wider_face_split")
    (base / "wider_face_split" / "wider_face_val_bbx_gt.txt").write_text(
        "0--Parade/a.jpg\n2\n78 221 7 8 2 0 0 0 0 0 \n78 238 14 17 2 0 0 0 0 1 \n"
        "1--Handshaking/b.jpg\n0\n0 0 0 0 0 0 0 0 0 0 \n")
    wf = datasets.WIDERFace(str(tmp_path), split="val")
    assert len(wf) == 2
    img, ann = wf[0]
    assert ann["bbox"].tolist() == [[78, 221, 7, 8], [78, 238, 14, 17]] and ann["invalid"].tolist() == [0, 1]
    assert ann["blur"].tolist() == [2, 2] and wf[1][1]["bbox"].tolist() == [[0, 0, 0, 0]]
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.WIDERFace(str(tmp_path), split="train")

    for name in ("1000092795.jpg", "10002456.jpg"):
        _save(str(tmp_path / "flickr" / name), 5)
    ann_file = tmp_path / "results.token"
    ann_file.write_text("1000092795.jpg#0\tTwo young guys .\n10002456.jpg#0\tSeveral men .\n"
                        "1000092795.jpg#1\tTwo men outside .\n")
    fl = datasets.Flickr30k(str(tmp_path / "flickr"), str(ann_file))
    assert fl.ids == ["1000092795.jpg", "10002456.jpg"]
    img, caps = fl[0]
    assert caps == ["Two young guys .", "Two men outside ."] and img.mode == "RGB"
