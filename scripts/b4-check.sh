#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make b4-check: would 'b4 send' send patches/ as it is, to the right people?
#
# The series is b4-managed in a clone of linux/, build/b4/src, made afresh
# from patches/ at every run.  linux/ itself is not enrolled: b4's cover
# letter commit (its default "commit" strategy) would sit in base..coarse-stat,
# where export.sh, get-base.sh and every rebase would see it, and b4 0.12's
# other strategy, "branch-description", writes a wrong base-commit (base~1)
# into the cover letter.  In the clone:
#  1. b4 prep -e base: b4's cover letter commit on base, branch b4-check
#  2. its message gets the subject and blurb of patches/0000-cover-letter.patch
#     and the change-id of patches/b4-change-id (b4's message ids start with
#     it); the patches of patches/series go on top (git am)
#  3. b4 prep --auto-to-cc (get_maintainer.pl on each patch)
#  4. b4 send -o build/b4/out --no-sign: the mails as files, nothing sent;
#     under 'unshare -n' (no network at all) when that works
# Checks: one mail per patch plus the cover letter, each patch mail carries
# the same change as its file in patches/ (git patch-id), checkpatch.pl
# --strict on the patch mails (b4 0.12 has no 'b4 prep --check'), the
# recipients are exactly what get_maintainer.pl --no-git --no-git-fallback
# gives for the series plus the patches' Cc: trailers (linux-api on every
# patch that changes include/uapi/ or a vDSO's symbols, which each mail must
# reach), and the cover letter names the base and change-id.
# The sender: patches/ keeps a neutral project identity (the cover
# letter's From:); a series is sent by a real person who certifies the DCO,
# so every patch is stamped with the sender's identity (From:, Signed-off-by:
# and the MAINTAINERS entry) in build/b4/stamped before anything else.  The
# sender is B4_SENDER='Name <email>' or git's user.name and user.email; a
# placeholder (example.*, *.invalid, *.test, localhost, noreply, the neutral
# identity) is refused.  B4_CHECK_TEST_IDENTITY=1 (CI) uses a throw-away
# identity at .invalid instead, for checking only.  To send for real: cd
# build/b4/src, set sendemail.* there, 'b4 send --reflect' first.
# BASE=6.12 (scripts/base.sh): backports/6.12/ on linux-6.12/, in build/6.12/b4.
# Last line "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/base.sh
. "$top/scripts/base.sh"
tree=$(realpath -m "${LINUX:-$base_tree}")
patches=$(realpath -m "${PATCHES:-$base_patches}")
b4dir=$BUILD_ROOT/b4
bsrc=$b4dir/src
out=$b4dir/out
branch=b4-check

die() { echo "b4-check: $*" >&2; exit 1; }
# shellcheck source=scripts/tap.sh
. "$top/scripts/tap.sh"

command -v b4 >/dev/null || die "b4 not installed (apt-get install b4)"
[ -e "$tree/.git" ] || die "no git tree at $tree (run 'make linux$base_make')"
[ -f "$patches/series" ] || die "no $patches/series"
cover=$patches/0000-cover-letter.patch
[ -f "$cover" ] || die "no $cover"
change_id=$(sed -n '1{/^[0-9]\{8\}-[a-z0-9-]*-[0-9a-f]\{12\}$/p}' "$patches/b4-change-id" 2>/dev/null)
[ -n "$change_id" ] || die "no change-id in $patches/b4-change-id: make one (once, then keep it) with
  echo \$(date +%Y%m%d)-coarse-stat-\$(od -An -N6 -tx1 /dev/urandom | tr -d ' \\n') >$patches/b4-change-id"
mapfile -t series < <(sed -e '/^#/d' -e '/^$/d' "$patches/series")
n=${#series[@]}
[ "$n" -gt 0 ] || die "patches/series is empty"

mkdir -p "$b4dir"
exec 9>"$b4dir/.lock"
flock -n 9 || { echo "b4-check: waiting for another b4-check"; flock 9; }
start=$SECONDS

# The sender, and patches/ stamped with it.
neutral=$(sed -n 's/^From: //p' "$cover" | head -n 1)
placeholder() {
	local e=${1##*<}

	e=${e%>}
	[[ "$1" =~ ^[^\<\>]*[^\<\>\ ]\ \<[^@\<\>\ ]+@[^@\<\>\ ]+\.[a-z]+\>$ ]] || return 0
	[ "$1" != "$neutral" ] || return 0
	case ${e,,} in
	*@example.com | *@example.org | *@example.net | *.example | *.invalid | *.test | \
	*.localhost | *@localhost | *noreply*) return 0 ;;
	esac
	return 1
}
if [ "${B4_CHECK_TEST_IDENTITY:-0}" = 1 ]; then
	sender="b4-check test <b4-check@coarse-stat.invalid>"
	echo "b4-check: throw-away test identity '$sender': the mails are for checking only"
else
	sender=${B4_SENDER:-}
	if [ -z "$sender" ]; then
		sname=$(git -C "$top" config user.name)
		semail=$(git -C "$top" config user.email)
		[ -z "$sname" ] || [ -z "$semail" ] || sender="$sname <$semail>"
	fi
	[ -n "$sender" ] || die "no sender: set git's user.name and user.email, or B4_SENDER='Name <email>'
  (B4_CHECK_TEST_IDENTITY=1 checks with a throw-away identity)"
	! placeholder "$sender" || die "'$sender' is a placeholder, not a person who can certify the DCO:
  set git's user.name and user.email, or B4_SENDER='Name <email>'
  (B4_CHECK_TEST_IDENTITY=1 checks with a throw-away identity)"
fi
stamped=$b4dir/stamped
rm -rf "$stamped"
mkdir -p "$stamped"
for p in 0000-cover-letter.patch "${series[@]}"; do
	NEUTRAL=$neutral SENDER=$sender perl -pe '
		BEGIN { $n = quotemeta $ENV{NEUTRAL}; $s = $ENV{SENDER}; }
		s/^(From: |Signed-off-by: |[ +-]M:\t)$n$/$1$s/;' "$patches/$p" >"$stamped/$p" ||
		die "cannot stamp patches/$p"
done
patches=$stamped
cover=$patches/0000-cover-letter.patch

gb() { git -C "$bsrc" "$@"; }
# (A clone that lost objects pruned in linux/ is made again.)
[ ! -e "$bsrc/.git" ] || gb fetch -q --force origin '+refs/tags/*:refs/tags/*' 2>/dev/null ||
	rm -rf "$bsrc"
if [ ! -e "$bsrc/.git" ]; then
	echo "b4-check: cloning $tree into $bsrc (shared; the first checkout takes a minute)"
	git clone -q --shared --no-checkout "$tree" "$bsrc" || die "git clone failed"
fi

# The clone's own settings: the sender, mails to files only.
name=${sender% <*}
email=${sender##*<}
email=${email%>}
gb config user.name "$name"
gb config user.email "$email"
gb config sendemail.smtpserver localhost
gb config b4.prep-cover-strategy commit
gb config b4.send-no-patatt-sign yes

# 1. enroll: b4 makes its cover letter commit on base (no patches yet) ...
gb checkout -q -f -B "$branch" base || die "checkout of base failed"
gb config --remove-section "branch.$branch" 2>/dev/null
nonet=()
unshare -n true 2>/dev/null && nonet=(unshare -n)
b4q() { (cd "$bsrc" && "${nonet[@]}" b4 -q "$@"); }
b4q prep -e base >"$b4dir/b4.log" 2>&1 || { cat "$b4dir/b4.log"; die "b4 prep -e base failed"; }

# 2. ... which gets the cover letter and change-id of patches/ ...
subject=$(sed -n '/^Subject: /,/^[^ ]/{s/^Subject: //;/^[A-Za-z-]*: /d;p}' "$cover" | sed '/^$/q' | tr -d '\n' | sed 's/^ *//')
# The blurb: from the end of the headers to the shortlog (see export.sh).
blurb=$(perl -ne '
	push @l, $_;
	END {
		my $h = 0;
		$h++ while $h <= $#l && $l[$h] !~ /^$/;
		my $i = $#l;
		$i-- while $i >= 0 && $l[$i] !~ /^base-commit: /;
		my $e = $i;
		for ($i--; $i >= 0; $i--) {
			my $s = $l[$i];
			if ($s =~ /^\S.* \(\d+\):$/ && $l[$i + 1] =~ /^  \S/) { $e = $i; next; }
			next if $s =~ /^$/ || $s =~ /^ /;
			last;
		}
		print @l[$h + 1 .. $e - 1];
	}' "$cover")
# b4's message: cover letter, its marker line, the tracking data (JSON).
# "[PATCH RFC v2 0/5] text" gives prefixes RFC, revision 2, subject text.
msg=$(gb log -1 --format=%B HEAD | python3 -c '
import json, re, sys
subject, blurb, change_id = sys.argv[1:4]
marker = "--- b4-submit-tracking ---"
old = sys.stdin.read()
t = json.loads("{" + old.split(marker, 1)[1].split("{", 1)[1])
m = re.match(r"\s*\[([^]]*)\]\s*", subject)
rev, pre = 1, []
for w in (m.group(1).split() if m else []):
    if re.fullmatch(r"[vV]\d+", w):
        rev = int(w[1:])
    elif w.upper() != "PATCH" and not re.fullmatch(r"\d+/\d+", w):
        pre.append(w)
t["series"].update({"change-id": change_id, "revision": rev, "prefixes": pre})
text = subject[m.end():] if m else subject
print(text + "\n\n" + blurb.strip() + "\n\n" + marker + "\n" +
      "# This section is used internally by b4 prep for tracking purposes.\n" +
      json.dumps(t, indent=2))' "$subject" "$blurb" "$change_id") || die "cannot read b4's cover letter commit"
gb commit -q --amend --allow-empty -m "$msg" || die "cannot write the cover letter commit"

# ... and the patches go on top (fixed committer: reproducible commits).
for p in "${series[@]}"; do
	if ! gb -c user.name="coarse_stat base" -c user.email=base@localhost -c commit.gpgsign=false \
		am -q --keep-cr --committer-date-is-author-date "$patches/$p" >/dev/null 2>&1; then
		gb am --abort >/dev/null 2>&1
		die "patches/$p does not apply"
	fi
done

# 3. To/Cc from get_maintainer.pl, 4. the mails
b4q prep --auto-to-cc >>"$b4dir/b4.log" 2>&1 || { cat "$b4dir/b4.log"; die "b4 prep --auto-to-cc failed"; }
# ... and the Cc: trailers of the patches (linux-api on the ABI patches, which
# get_maintainer.pl does not name: Documentation/process/adding-syscalls.rst)
# for the whole series, the cover letter included: b4 itself would Cc them
# on their own patch only.  In the clone's config, so that a real 'b4 send'
# from build/b4/src does the same.
trailer_cc() {
	awk 'FNR == 1 { m = 1 } /^---$/ { m = 0 } m && sub(/^Cc: /, "") { print tolower($0) }' "$@" | sort -u
}
mapfile -t extra_cc < <(trailer_cc "${series[@]/#/$patches/}")
gb config --unset-all b4.send-series-cc 2>/dev/null
[ ${#extra_cc[@]} = 0 ] || gb config b4.send-series-cc "$(printf '%s, ' "${extra_cc[@]}" | sed 's/, $//')"
rm -rf "$out"
b4q send -o "$out" --no-sign >>"$b4dir/b4.log" 2>&1 || { cat "$b4dir/b4.log"; die "b4 send -o failed"; }

# The checks
mapfile -t mails < <(find "$out" -name '*.eml' | sort)
[ ${#mails[@]} = $((n + 1)) ]
result "b4 send wrote $((n + 1)) mails (cover letter + $n patches): ${#mails[@]}" $?

python3 - "$out" "$patches" "$n" "$change_id" "$(gb rev-parse base)" >"$b4dir/mails.txt" <<'EOF'
import email, email.policy, email.utils, glob, os, re, sys
out, patches, n, change_id, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def subj(s):
    return re.sub(r'\s+', ' ', str(s)).strip()
mails = {}
for f in glob.glob(os.path.join(out, '*.eml')):
    with open(f, 'rb') as fh:
        m = email.message_from_binary_file(fh, policy=email.policy.default)
    s = subj(m['Subject'])
    k = re.search(r'\b(\d+)/(\d+)\]', s)
    mails[int(k.group(1)) if k else -1] = (f, m, s)
rcpt = set()
for i in sorted(mails):
    f, m, s = mails[i]
    addrs = email.utils.getaddresses([str(x) for x in m.get_all('To', []) + m.get_all('Cc', [])])
    a = sorted({x[1].lower() for x in addrs if x[1]})
    rcpt |= set(a)
    print('mail %d %s' % (i, os.path.basename(f)))
    print('subject %d %s' % (i, s))
    print('rcpt %d %s' % (i, ' '.join(a)))
    fa = email.utils.getaddresses([str(m['From'])])
    print('from %d %s <%s>' % (i, fa[0][0], fa[0][1]))
    if i > 0:
        sob = re.findall(r'^Signed-off-by: (.*)$', m.get_body(('plain',)).get_content(), re.M)
        print('sob %d %s' % (i, '|'.join(sob)))
print('all-rcpt ' + ' '.join(sorted(rcpt)))
if 0 in mails:
    body = mails[0][1].get_content()
    print('cover-change-id %s' % (change_id in body and re.search(r'^change-id: ' + re.escape(change_id) + '$', body, re.M) is not None))
    print('cover-base %s' % (re.search(r'^base-commit: ' + base + '$', body, re.M) is not None))
    print('msgid %s' % mails[0][1]['Message-Id'])
EOF

# Each patch mail has the change of its file in patches/, in order.
bad=0
for i in $(seq 1 "$n"); do
	f=$(sed -n "s/^mail $i //p" "$b4dir/mails.txt")
	p=${series[$((i - 1))]}
	want=$(git patch-id --stable <"$patches/$p" | cut -d' ' -f1)
	have=$( [ -n "$f" ] && git patch-id --stable <"$out/$f" | cut -d' ' -f1)
	if [ -z "$want" ] || [ "$want" != "$have" ]; then
		echo "b4-check: mail $i/$n (${f:-missing}) does not carry the change of patches/$p"
		bad=1
	fi
	# and its subject, without the [PATCH ...] prefix.
	ws=$(sed -n '/^Subject: /,/^[^ ]/{s/^Subject: //;/^[A-Za-z-]*: /d;p}' "$patches/$p" | sed '/^$/q' |
		tr -d '\n' | sed 's/^ *\[[^]]*\] *//; s/  */ /g')
	hs=$(sed -n "s/^subject $i //p" "$b4dir/mails.txt" | sed 's/^ *\[[^]]*\] *//')
	[ "$ws" = "$hs" ] || { echo "b4-check: mail $i/$n subject '$hs', patches/$p has '$ws'"; bad=1; }
done
result "the patch mails carry patches/ in order (git patch-id, subjects)" $bad

# Every mail is from the sender, every patch signed off by the sender only,
# and the neutral identity of patches/ is nowhere.
bad=0
while read -r i f; do
	[ "$f" = "$sender" ] || { echo "b4-check: mail $i is from '$f', not '$sender'"; bad=1; }
done < <(sed -n 's/^from //p' "$b4dir/mails.txt")
while read -r i f; do
	[ "$f" = "$sender" ] || { echo "b4-check: mail $i is signed off by '$f', not '$sender'"; bad=1; }
done < <(sed -n 's/^sob //p' "$b4dir/mails.txt")
! grep -rlF "$neutral" "$out" >/dev/null || { echo "b4-check: '$neutral' is still in $(grep -rlF "$neutral" "$out" | wc -l) mails"; bad=1; }
result "every mail is From: and Signed-off-by: the sender, $sender" $bad

# (one checkpatch per CPU)
cpd=$b4dir/checkpatch
rm -rf "$cpd"
mkdir -p "$cpd"
earlier=()
for i in $(seq 1 "$n"); do
	f=$(sed -n "s/^mail $i //p" "$b4dir/mails.txt")
	[ -n "$f" ] || { echo 1 >"$cpd/$i.rc"; continue; }
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
	{
		"$top/scripts/checkpatch.sh" "$bsrc" "$out/$f" "${earlier[@]}" >"$cpd/$i.out" 2>&1
		echo $? >"$cpd/$i.rc"
	} &
	earlier+=("$out/$f")
done
wait
bad=0
for i in $(seq 1 "$n"); do
	[ "$(cat "$cpd/$i.rc")" = 0 ] && continue
	bad=1
	echo "b4-check: checkpatch.pl --strict on mail $i/$n ($(sed -n "s/^mail $i //p" "$b4dir/mails.txt")):"
	cat "$cpd/$i.out" 2>/dev/null
done
result "checkpatch.pl --strict on the $n patch mails" $bad

# The ABI patches (include/uapi/, a vDSO's symbol list) carry a Cc: of
# linux-api, and every mail goes there.
api=linux-api@vger.kernel.org
bad=0
nabi=0
for p in "${series[@]}"; do
	grep -qE '^\+\+\+ b/(include/uapi/|arch/[^/]+/include/uapi/|.*/vdso[^/]*\.lds\.S$)' "$patches/$p" || continue
	nabi=$((nabi + 1))
	trailer_cc "$patches/$p" | grep -qxF "$api" ||
		{ echo "b4-check: patches/$p changes the ABI but has no 'Cc: $api'"; bad=1; }
done
while read -r i a; do
	[[ " $a " == *" $api "* ]] || { echo "b4-check: mail $i does not go to $api"; bad=1; }
done < <(sed -n 's/^rcpt //p' "$b4dir/mails.txt")
[ "$nabi" -gt 0 ] || { echo "b4-check: no patch changes include/uapi/ or a vDSO symbol list?"; bad=1; }
result "$api: Cc: in the $nabi ABI patches, and in every mail" $bad

# The recipients: exactly get_maintainer.pl's for the series, run on each
# patch as b4 does: one run over all of them drops a person's other
# addresses (its duplicate removal goes by name: Linux 7.3's MAINTAINERS
# has people with two addresses in different entries); and the patches'
# Cc: trailers.
want=$( (cd "$bsrc" && printf '%s\0' "${series[@]/#/$patches/}" |
	xargs -0 -n 1 -P "$(nproc)" scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats \
	2>/dev/null; printf '%s\n' "${extra_cc[@]}") | python3 -c '
import email.utils, sys
print(" ".join(sorted({a[1].lower() for a in email.utils.getaddresses(sys.stdin.read().splitlines()) if a[1]})))')
have=$(sed -n 's/^all-rcpt //p' "$b4dir/mails.txt")
missing=$(comm -23 <(tr ' ' '\n' <<<"$want" | sed '/^$/d') <(tr ' ' '\n' <<<"$have" | sed '/^$/d'))
extra=$(comm -13 <(tr ' ' '\n' <<<"$want" | sed '/^$/d') <(tr ' ' '\n' <<<"$have" | sed '/^$/d'))
[ -z "$missing" ] || echo "b4-check: get_maintainer.pl names, the mails do not: $(echo "$missing" | xargs)"
[ -z "$extra" ] || echo "b4-check: the mails go to, get_maintainer.pl does not name: $(echo "$extra" | xargs)"
[ -n "$want" ] && [ -z "$missing" ] && [ -z "$extra" ]
rc=$?
result "recipients = get_maintainer.pl --no-git --no-git-fallback + the Cc: trailers ($(wc -w <<<"$want") addresses)" $rc
# Every mail goes to all of them.
bad=0
while read -r i a; do
	[ "$a" = "$have" ] || { echo "b4-check: mail $i goes to $a"; bad=1; }
done < <(sed -n 's/^rcpt //p' "$b4dir/mails.txt")
result "every mail has the same To/Cc" $bad

grep -qx 'cover-change-id True' "$b4dir/mails.txt" && grep -qx 'cover-base True' "$b4dir/mails.txt"
rc=$?
result "the cover letter names base-commit $(gb rev-parse --short=12 base) and change-id $change_id" $rc

echo
echo "b4-check: summary ($((SECONDS - start)) s)"
sed -n 's/^subject -\{0,1\}[0-9]* /  /p' "$b4dir/mails.txt"
echo "  To/Cc: $(tr ' ' '\n' <<<"$have" | paste -sd, | sed 's/,/, /g')"
echo "  $(sed -n 's/^msgid /Message-Id: /p' "$b4dir/mails.txt")"
echo "  mails: $out"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
