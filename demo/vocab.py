"""Word banks the synthetic demo texts are composed from.

Everything here is invented social-media register: no real persons, no personal data, and only mild
insults (脑残 / 废物 / 蠢货 level). Texts are built from many independent pieces (openers, targets,
predicates, discourse frames, tails, punctuation) so that the demo does not collapse to one template
with a swapped noun. Order matters: generation indexes these lists with a seeded RNG, so editing them
changes the generated files (regenerate and commit the result).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """An identity family: the VARM category, VARM cue subset, and ToxiTrace labels it maps to."""

    key: str
    category: str  # VARM category when the family is attacked
    subset: str  # VARM cue-subset file stem
    toxicn_group: str  # ToxiCN target group
    cold_topic: str | None  # COLD topic, None when the family has no COLD analogue


FAMILIES: dict[str, Family] = {
    "region": Family("region", "地域族群攻击", "demographic_identity", "Region", "region"),
    "race": Family("race", "地域族群攻击", "demographic_identity", "Racism", "race"),
    "gender_f": Family("gender_f", "性别攻击", "demographic_identity", "Sexism", "gender"),
    "gender_m": Family("gender_m", "性别攻击", "demographic_identity", "Sexism", "gender"),
    "lgbt": Family("lgbt", "性少数攻击", "demographic_identity", "LGBTQ", None),
    "class": Family("class", "阶层职业攻击", "social_status_role", "others", None),
    "body": Family("body", "身心疾病攻击", "body_health_disability", "others", None),
    "general": Family("general", "一般辱骂", "general_abuse", "others", None),
}

# Explicit group nouns per identity family (target_type 群体对象, explicitness 明示).
GROUPS: dict[str, list[str]] = {
    "region": [
        "河南人",
        "东北人",
        "上海人",
        "广东人",
        "山东人",
        "四川人",
        "外地人",
        "北方人",
        "南方人",
        "湖北人",
    ],
    "race": ["外国人", "老外", "洋人", "外籍人士"],
    "gender_f": ["女司机", "女生", "女人", "宝妈", "单身女性", "女博士", "小姑娘"],
    "gender_m": ["男人", "男生", "直男", "中年男人", "已婚男人"],
    "lgbt": ["同性恋", "跨性别者", "同志群体", "男同", "LGBT群体", "双性恋"],
    "class": [
        "程序员",
        "外卖员",
        "快递员",
        "农民工",
        "保安",
        "穷人",
        "打工人",
        "销售",
        "网约车司机",
        "房东",
        "服务员",
        "乡下人",
        "保洁阿姨",
    ],
    "body": ["胖子", "残疾人", "抑郁症患者", "矮个子", "自闭症患者", "聋哑人", "口吃的人", "秃顶的人"],
}

# Sampling weights of the identity families: the five demographic families share one cue subset, so they
# are down-weighted to keep the four cue subsets of comparable size.
FAMILY_WEIGHTS: dict[str, float] = {
    "region": 0.8,
    "race": 0.4,
    "gender_f": 0.6,
    "gender_m": 0.4,
    "lgbt": 0.6,
    "class": 2.2,
    "body": 2.2,
}

# Attack predicates per family; attached directly after the group noun.
GROUP_PREDICATES: dict[str, list[str]] = {
    "region": [
        "都是骗子",
        "素质也就这样了",
        "没一个靠谱的",
        "就爱占小便宜",
        "走到哪儿都招人烦",
        "一个比一个精",
        "都是一路货色",
        "最好别来我们这儿",
        "出门在外净给老家丢人",
        "说话做事都透着一股土气",
    ],
    "race": [
        "都是来骗钱的",
        "素质也就这样了",
        "没一个安好心的",
        "赶紧滚回自己国家去",
        "就知道占便宜",
        "在这儿装什么大爷",
    ],
    "gender_f": [
        "就是头发长见识短",
        "脑子里只有彩礼",
        "就会作",
        "遇到点事就只会哭",
        "一个个都是拜金的",
        "别出来丢人了",
        "开车就是马路杀手",
    ],
    "gender_m": [
        "没一个好东西",
        "普信得离谱",
        "就知道吹牛",
        "一个个都是渣",
        "除了打游戏啥也不会",
        "油腻得让人恶心",
    ],
    "lgbt": ["就是有病", "看着就恶心", "别出来带坏小孩", "都是心理变态", "就该去治一治", "离我远点行吗"],
    "class": [
        "都是没文化的",
        "素质低得可怜",
        "活该一辈子受穷",
        "就是社会底层的废物",
        "没脑子才干这行",
        "一个个跟蠢货一样",
        "都是混日子的",
        "看着就低人一等",
    ],
    "body": [
        "就是自己作的",
        "看着就碍眼",
        "别出门给人添乱",
        "就是矫情装可怜",
        "脑子也不太好使吧",
        "活该被人笑话",
        "根本就是废物",
    ],
}

# Generic insults usable after any group noun (still an identity attack when aimed at a group).
GENERIC_GROUP_PREDICATES = [
    "都是脑残",
    "全是废物",
    "蠢得要命",
    "就是一群蠢货",
    "真让人恶心",
    "脑子都不太正常",
    "就是一帮白痴",
    "全是垃圾",
]

# Named-but-not-identity single targets (一般辱骂 when insulted).
SINGLES = [
    "楼主",
    "这个博主",
    "那个up主",
    "楼上",
    "这个主播",
    "我们组长",
    "隔壁那个大哥",
    "我那个室友",
    "这个裁判",
    "那个客服",
    "这个导演",
    "那个编剧",
    "这位答主",
    "我前同事",
    "我们班长",
    "这个解说",
    "对面那个队友",
    "这个店主",
    "那个评论员",
    "二楼那位",
]

SINGLE_PREDICATES = [
    "就是个脑残",
    "真是个废物",
    "蠢得没边了",
    "脑子被门夹了吧",
    "说话跟个白痴一样",
    "什么垃圾水平",
    "整天丢人现眼",
    "一把年纪了还这么蠢",
    "智商堪忧",
    "纯纯的蠢货",
    "是不是没长脑子",
    "恶心死人了",
    "活成了一个笑话",
    "又蠢又坏",
    "废物一个",
    "除了喷人什么都不会",
]

# Single targets described by an identity, with identity-based attacks (category = family's).
SINGLE_IDENTITY: list[tuple[str, str, list[str]]] = [
    ("那个女司机", "gender_f", ["开车跟没长眼一样，女的果然不行", "倒个车倒半天，女人开车就这样"]),
    ("我们楼那个宝妈", "gender_f", ["天天就知道作，当了妈的都这德行", "脑子里只有孩子和钱，女人真麻烦"]),
    ("那个直男", "gender_m", ["普信得离谱，男的都这德行", "油腻得让人想吐，男人没一个好东西"]),
    ("这个外卖员", "class", ["干这行的就是没文化", "素质低得可怜，难怪只能送外卖"]),
    ("门口那个保安", "class", ["一看就是混日子的废物", "没本事才来当保安"]),
    ("新来的那个程序员", "class", ["除了写代码就是个废物", "书呆子一个，跟蠢货没两样"]),
    ("楼下那个胖子", "body", ["胖成那样还好意思出门", "管不住嘴就是活该，看着就碍眼"]),
    ("那个矮个子", "body", ["个子矮脑子也不好使", "矮成那样还这么嚣张，笑死"]),
    ("那个东北大哥", "region", ["一开口就一股土味，没素质", "跟他老家人一个德行，就会吹"]),
    ("隔壁那个上海人", "region", ["抠门到家了，他们那儿的人都这样", "看不起外地人，真是个势利眼"]),
    ("那个老外", "race", ["装什么大爷，赶紧滚回自己国家去", "一看就是来骗钱的"]),
    ("那个外地人", "region", ["没素质还不讲理，外地人就是这样", "一看就是从小地方来的没见过世面"]),
]

# Indirect references (explicitness 隐含): (surface as written, family, target_type).
IMPLICIT_REFS: list[tuple[str, str, str]] = [
    ("某省的人", "region", "群体对象"),
    ("那边过来的人", "region", "群体对象"),
    ("某地来的", "region", "群体对象"),
    ("有些当妈的", "gender_f", "群体对象"),
    ("某些小仙女", "gender_f", "群体对象"),
    ("某些爷们儿", "gender_m", "群体对象"),
    ("那个圈子的人", "lgbt", "群体对象"),
    ("彩虹圈那帮人", "lgbt", "群体对象"),
    ("干这行的", "class", "群体对象"),
    ("送外卖那帮", "class", "群体对象"),
    ("天天搬砖的那些", "class", "群体对象"),
    ("那种身材的", "body", "群体对象"),
    ("某些人", "general", "群体对象"),
    ("有的人", "general", "群体对象"),
    ("你们这种人", "general", "群体对象"),
    ("这帮人", "general", "群体对象"),
    ("某位大V", "general", "单一对象"),
    ("那位不点名的主播", "general", "单一对象"),
    ("你懂的那位", "general", "单一对象"),
    ("某个同事", "general", "单一对象"),
    ("体重两百斤那位", "body", "单一对象"),
    ("那位从某省来的同事", "region", "单一对象"),
]

# Identity-based attacks for the implicit single references of an identity family.
IMPLICIT_SINGLE_PREDICATES: dict[str, list[str]] = {
    "体重两百斤那位": ["胖成那样还好意思出门", "管不住嘴就是活该，看着就碍眼", "走两步就喘，真是个废物"],
    "那位从某省来的同事": [
        "没素质还不讲理，他们那儿的人都这样",
        "抠门到家了，他们那儿的人都这样",
        "一开口就一股土味，真丢人",
    ],
}

OPENERS = [
    "",
    "",
    "",
    "说实话，",
    "讲真，",
    "不是我说，",
    "笑死，",
    "服了，",
    "我真的会谢，",
    "无语了，",
    "有一说一，",
    "说句难听的，",
    "又来了，",
    "哈哈哈，",
    "救命，",
    "看完气死了，",
    "每次看到这种就来气，",
    "懂的都懂，",
    "实话实说，",
    "醒醒吧，",
    "不吐不快，",
    "唉，",
    "啧，",
    "就这？",
]

ATTACK_TAILS = [
    "",
    "",
    "",
    "，懒得喷了",
    "，拉黑了",
    "，别洗了",
    "，谁还不知道啊",
    "，散了吧",
    "，真的服",
    "，不接受反驳",
    "，我说的",
    "，下一个",
    "，看一次气一次",
    "，早就看透了",
    "，一点不冤枉",
    "，离远点吧",
    "，建议别惹",
]

ENDINGS = ["。", "！", "！！", "…", "", "。。", "~"]

# Harmful frames: {t} target, {p} predicate. Endorsement frames agree with someone else's attack.
ATTACK_FRAMES = [
    "{o}{t}{p}{tail}{e}",
    "{o}{t}{p}{tail}{e}",
    "{o}{t}啊，{p}{tail}{e}",
    "{o}就{t}那样，{p}{tail}{e}",
    "{o}又是{t}，{p}{tail}{e}",
    "{t}{p}，{o2}{e}",
]
ENDORSE_FRAMES = [
    "楼上说得太对了，{t}{p}{e}",
    "+1，{t}{p}{tail}{e}",
    "确实，{t}{p}{e}",
    "顶一下，{t}{p}，终于有人说了{e}",
    "同意楼主，{t}{p}{e}",
    "赞同，{t}{p}{tail}{e}",
]
SECOND_CLAUSES = ["看着就烦", "不想多说", "真的够了", "别来沾边", "受不了", "服气"]

# Harmful without an identifiable target (一般辱骂, 无明确对象).
NO_TARGET_ATTACKS = [
    "谁信谁是脑残",
    "谁买谁就是蠢货",
    "蠢货才会信这种鬼话",
    "脑残才会转发这种东西",
    "真是一群废物在起哄",
    "什么垃圾玩意儿，谁看谁白痴",
    "废物才天天在网上骂街",
    "点赞这种内容的都是脑残",
    "转这个的人脑子怕是进水了",
    "还信这个的全是蠢货",
]
NO_TARGET_TAILS = [
    "，看得我血压都上来了",
    "，懒得解释",
    "，散了散了",
    "，不服来辩",
    "",
    "，笑死个人",
    "，真的醉了",
]

# ---- non-harmful discourse frames ------------------------------------------------------------------
# Quotation (引用或转述): {q} is a quoted attack sentence, {n} a neutral comment.
QUOTE_FRAMES = [
    "刚刷到一条评论说“{q}”，底下吵了几百楼，{n}",
    "记录一下，今天在群里看到有人发“{q}”，我没参与，{n}",
    "新闻里说有网友因为发“{q}”被封号了，{n}",
    "弹幕一直在刷“{q}”，{n}",
    "我爸转给我一篇文章，标题就叫“{q}”，问我怎么看，{n}",
    "原话是“{q}”，我只是搬运过来，{n}",
    "热搜那条视频里，有人喊了一句“{q}”，{n}",
    "看到一个帖子说“{q}”，转给朋友看了看，{n}",
    "听同事说，昨天有人在公司群里讲“{q}”，{n}",
    "有个博主专门截了“{q}”这种评论做合集，{n}",
]
QUOTE_COMMENTS = [
    "大家自己判断吧",
    "不评价",
    "先吃个瓜",
    "看看大家怎么说",
    "截图留档了",
    "不知道后续怎么样了",
    "具体情况还不清楚",
    "只是转述一下",
    "评论区两边都有人",
    "有没有知道来龙去脉的",
]

# Rebuttal (反对攻击).
REBUT_FRAMES = [
    "别再说“{q}”了，{c}",
    "动不动就说{q}，这种话真的很没意思，{c}",
    "凭什么说{t}{p}？{c}",
    "看到有人骂{t}{p}，真的看不下去，{c}",
    "{t}招谁惹谁了，天天被人说{p}，{c}",
    "不认同“{q}”这种说法，{c}",
    "“{q}”这种话能不能少说点，{c}",
    "又有人在评论区说{q}，{c}",
    "说{t}{p}的，你真的认识几个{t}吗？{c}",
]
COUNTERS = [
    "任何群体里都有好人坏人",
    "以偏概全要不得",
    "请就事论事别扯身份",
    "网络不是法外之地",
    "尊重是最基本的",
    "这种标签贴得太随便了",
    "换位思考一下吧",
    "个例不能代表所有人",
    "我身边的朋友都挺好的",
    "地图炮真的很伤人",
    "骂人解决不了任何问题",
    "歧视就是歧视，别找借口",
]
# Counters that read naturally when the attacked party is one person.
COUNTERS_SINGLE = [
    "就事论事，别上升到人身攻击",
    "人家也挺不容易的",
    "骂人解决不了任何问题",
    "有意见可以好好提",
    "网络不是法外之地",
    "尊重是最基本的",
    "不喜欢可以划走，没必要骂人",
]

# Neutral identity mention (中性提及).
NEUTRAL_FRAMES = [
    "{t}过年回家一般买哪天的票？求经验",
    "我们公司{t}挺多的，中午食堂排队特别长",
    "最近看了一个关于{t}的纪录片，拍得挺真实的",
    "周末社区有个{t}的交流活动，有兴趣可以来看看",
    "采访了几位{t}，聊了聊他们的日常，素材整理好了",
    "有没有{t}来说说你们平时怎么安排周末",
    "数据显示{t}在这个行业里的比例一直在上升",
    "这本书里有一章专门写{t}的生活状态，推荐",
    "{t}和大家一样，也要上班买菜带孩子",
    "问一下，{t}租房一般看重什么条件",
    "今天的讲座主题是{t}的就业情况，收获挺多",
    "小区群里有几位{t}，平时互相帮忙挺多的",
]

# Personal account (中性提及), including self-reports that mention an insult someone once used.
PERSONAL_FRAMES = ["作为一个{t}，{x}", "我自己就是{t}，{x}", "身为{t}，{x}", "本人{t}一枚，{x}"]
PERSONAL_EXPERIENCES = [
    "刚来这边的时候也不太适应，慢慢就好了",
    "这几年最大的感受是大家越来越包容了",
    "分享一下我找工作的经历，希望对大家有帮助",
    "被人开过不少玩笑，现在已经能平常心看待了",
    "其实日子跟大家都一样过",
    "以前被人说过是废物，后来自己慢慢走出来了",
    "上学时被同学叫过脑残，现在想想也没什么",
    "说说我这些年遇到的好心人",
    "最近在学做饭，厨艺进步很大",
    "今年终于攒够钱去旅游了",
]

# Criticism of one person's behaviour (中性提及): criticises an act, not an identity; no insult.
BEHAVIOUR_TARGETS = [
    "楼上那位",
    "我们组长",
    "那个外卖员",
    "隔壁邻居",
    "这个主播",
    "那个网约车司机",
    "前排那个大哥",
    "我室友",
    "那个女司机",
    "门口那个保安",
    "这个博主",
    "那个快递员",
    "我前同事",
    "这个店主",
]
BEHAVIOURS = [
    "开会又迟到了半小时",
    "把垃圾直接扔在楼道里",
    "闯红灯差点撞到人",
    "在禁烟区一直抽烟",
    "答应的事情又没做到",
    "外放视频声音开到最大",
    "停车占了两个车位",
    "收了钱却迟迟不办事",
    "在电梯里大声打电话",
    "把别人的快递拿错了还不还",
]
BEHAVIOUR_CRITIQUES = [
    "这种行为真的不应该",
    "希望下次注意一点",
    "已经跟物业反映了",
    "说了好几次也没改",
    "规则就是规则",
    "不是针对人，就是这件事做得不对",
    "麻烦改一改吧",
    "已经投诉了，看后续处理",
]

# Everyday posts with no target and no cue (中性提及, 无明确对象).
PLAIN_POSTS = [
    "今天下班路上看到晚霞，拍了好几张",
    "周末去爬山了，山顶风景绝了",
    "求推荐一部轻松点的电视剧",
    "新买的键盘手感不错，打字很舒服",
    "食堂今天的红烧肉有点咸",
    "早上的地铁挤得像沙丁鱼罐头",
    "猫主子今天又把杯子推到地上了",
    "终于把拖了一个月的报告写完了",
    "楼下新开了一家面馆，味道还行",
    "明天降温，大家记得加衣服",
    "第一次自己包饺子，形状有点丑",
    "这首歌单曲循环一下午了",
    "考完试了，准备睡到自然醒",
    "阳台的绿萝又长出新叶子了",
    "今天跑了五公里，腿有点酸",
    "图书馆的位置太难抢了",
    "有人知道这个快递为什么三天没动吗",
    "周五晚上适合看什么电影",
]
PLAIN_TAILS = ["", "，开心", "，记录一下", "，大家周末愉快", "，有同款的吗", "，哈哈", "，求推荐"]

# Self-deprecation (中性提及, 无明确对象): insult words aimed at oneself, not at anyone else.
SELF_DEPRECATION = [
    "我真是个蠢货，又把钥匙锁家里了",
    "今天又迟到了，感觉自己像个废物",
    "我脑残买错了车票，改签花了五十",
    "蠢到家了，洗衣机里忘放洗衣液",
    "我就是个废物，减肥第三天就破功",
    "自己蠢哭了，密码又输错三次",
    "做饭把糖当成盐，我可真是个白痴",
    "又忘带工牌，我这脑残记性没救了",
    "考试把名字写错了，蠢货本蠢",
    "出门发现衣服穿反了，废物如我",
    "坐过站三次，我大概是个白痴吧",
    "网购下单填错地址，我真是脑残",
]

# General anti-abuse remarks with no specific target (反对攻击, 无明确对象).
ANTI_ABUSE = [
    "网上吵架能不能别动不动就骂人脑残，好好说话不行吗",
    "别一言不合就说别人是废物，谁都有难处",
    "评论区少点“蠢货”“白痴”这种词吧，看着真累",
    "骂别人垃圾并不会让自己显得高明",
    "讨论问题就讨论问题，张口闭口脑残有什么意思",
    "希望大家发言前想一想，恶语伤人六月寒",
    "观点不同很正常，没必要骂对方蠢货",
    "把“废物”挂在嘴边的人，其实最该反省",
    "吵架归吵架，骂人白痴就过了",
    "给小孩看的视频底下全是“脑残”“垃圾”，太不合适了",
    "能不能讲道理，别上来就说人家是垃圾",
    "不同意可以反驳，骂人脑残只会让讨论变味",
]
