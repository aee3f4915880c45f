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


def test_voc_segmentation_and_detection(tmp_path):
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
